/* p4exec v1model: declarations of the v1model architecture (the BMv2 simple_switch model) as p4exec
 * implements it. Written for p4exec from the v1model architecture description. */
#ifndef _V1_MODEL_P4_
#define _V1_MODEL_P4_

#include <core.p4>

/* Like p4c's v1model.p4: a program that does not choose a version gets 20180101, where counter, meter and
 * register are indexed by bit<32> (no index type parameter) and there is no PortId_t. Defining
 * V1MODEL_VERSION >= 20200408 before the #include selects the later declarations (counter<I>, meter<I>,
 * register<T, I>, PortId_t). No implicit width conversion applies to an index of either kind. */
#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif

match_kind {
    range,
    optional,
    selector
}

const bit<32> __v1model_version = V1MODEL_VERSION;

#if V1MODEL_VERSION >= 20200408
/* The only typedef p4c's v1model declares, and only from this version on. */
typedef bit<9>  PortId_t;
#endif

@metadata @name("standard_metadata")
struct standard_metadata_t {
    bit<9>   ingress_port;
    bit<9>   egress_spec;          /* set by ingress; 511 drops */
    bit<9>   egress_port;          /* read-only in egress */
    bit<32>  instance_type;        /* 0 normal, 1 ingress clone, 2 egress clone, 4 recirculated, 5 replica, 6 resubmitted */
    bit<32>  packet_length;
    bit<32>  enq_timestamp;        /* microseconds */
    bit<19>  enq_qdepth;
    bit<32>  deq_timedelta;        /* microseconds */
    bit<19>  deq_qdepth;
    bit<48>  ingress_global_timestamp;
    bit<48>  egress_global_timestamp;
    bit<16>  mcast_grp;
    bit<16>  egress_rid;
    bit<1>   checksum_error;
    error    parser_error;
    bit<3>   priority;
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

#if V1MODEL_VERSION >= 20200408
extern counter<I> {
    counter(bit<32> size, CounterType type);
    void count(in I index);
}
#else
extern counter {
    counter(bit<32> size, CounterType type);
    void count(in bit<32> index);
}
#endif

extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

#if V1MODEL_VERSION >= 20200408
extern meter<I> {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in I index, out T result);
}
#else
extern meter {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in bit<32> index, out T result);
}
#endif

extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

/* Only read(out, index) and write(index, value): p4c's v1model has neither a size-less constructor nor a
 * value-returning read. */
#if V1MODEL_VERSION >= 20200408
extern register<T, I> {
    register(bit<32> size);
    void read(out T result, in I index);
    void write(in I index, in T value);
}
#else
extern register<T> {
    register(bit<32> size);
    void read(out T result, in bit<32> index);
    void write(in bit<32> index, in T value);
}
#endif

extern action_profile {
    action_profile(bit<32> size);
}

/* Random integer in [lo, hi], inclusive. */
extern void random<T>(out T result, in T lo, in T hi);

/* Send data to the control plane as a digest. */
extern void digest<T>(in bit<32> receiver, in T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();

/* Drop the packet: egress_spec := 511, mcast_grp := 0. */
@pure
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

/* result := base + (hash(data) mod max) (when max > 0). */
@pure
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,
    E2E
}

@deprecated("Please use verify_checksum/update_checksum instead.")
extern Checksum16 {
    Checksum16();
    bit<16> get<D>(in D data);
}

extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
@pure
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
@noSideEffects
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

extern void clone(in CloneType type, in bit<32> session);

@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<T>(in T data);
extern void resubmit_preserving_field_list(bit<8> index);

@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<T>(in T data);
extern void recirculate_preserving_field_list(bit<8> index);

@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

/* Truncate the outgoing packet to at most length bytes. */
extern void truncate(in bit<32> length);

extern void assert(in bool check);
extern void assume(in bool check);

extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

/* The architecture: blocks a v1model program provides. */
parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);

control VerifyChecksum<H, M>(inout H hdr, inout M meta);

@pipeline
control Ingress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);

@pipeline
control Egress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);

control ComputeChecksum<H, M>(inout H hdr, inout M meta);

@deparser
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep);

#endif  /* _V1_MODEL_P4_ */
