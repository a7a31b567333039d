/* inc_headers.p4 -- the in-network aggregation (INC) headers of ethplus_inc.p4.
 *
 * Included by headers.p4 only when ETHLAB_INC is defined (p4src/ethplus_inc.p4),
 * so ethplus.p4 itself is unchanged. Layout and rules: docs/ethplus-header.md,
 * "In-network aggregation". traffic/inc/wire.py packs the same bytes.
 *
 * An INC frame is  Ethernet (EtherType 0x88B6) | ETH+ 12 B | inc 20 B | data.
 * The data is INC_ELEMS 32-bit two's-complement integers (fixed point chosen
 * by the endpoints); switches add them modulo 2^32.
 *
 * Compile-time constants (change with -D at compile time):
 *   INC_ELEMS  elements per frame: 16, 64 or 256 (default 256 = 1 KiB of data,
 *              a 1,070-byte frame: fits a 1,500-byte MTU and so a 4 KiB one)
 *   INC_SLOTS  aggregation slots per switch, shared by all jobs (default 256);
 *              each slot has two copies (SwitchML's shadow copy), so the value
 *              register holds 2 * INC_SLOTS * INC_ELEMS elements.
 */
#ifndef ETHLAB_INC_HEADERS_P4
#define ETHLAB_INC_HEADERS_P4

#ifndef INC_ELEMS
#define INC_ELEMS 256
#endif
#ifndef INC_SLOTS
#define INC_SLOTS 256
#endif

/* The second IEEE 802 local-experimental EtherType: ETH+ frames that carry
 * an aggregation header after the ETH+ header. */
const bit<16> ETHERTYPE_INC = 0x88B6;

/* Contributors one switch can count per slot: the width of the bitmap. */
const bit<8>  INC_MAX_CONTRIBUTORS = 64;

/* What happened to an INC frame: index of MyIngress.agg.inc_events. */
const bit<32> INC_ABSORBED      = 0;  /* contribution added, not the last   */
const bit<32> INC_COMPLETED     = 1;  /* last contribution: result sent     */
const bit<32> INC_DUPLICATE     = 2;  /* already counted, slot not complete */
const bit<32> INC_REPLAYED      = 3;  /* already counted, result re-sent    */
const bit<32> INC_RESULT_DOWN   = 4;  /* parent's result stored and sent on */
const bit<32> INC_UNKNOWN_JOB   = 5;  /* no inc_job entry                   */
const bit<32> INC_NOT_MEMBER    = 6;  /* ingress port is not a contributor  */
const bit<32> INC_BAD_SLOT      = 7;  /* slot or frame length out of range  */
const bit<32> INC_STALE         = 8;  /* chunk differs from the slot's chunk */
const bit<32> INC_RESENT_UP     = 9;  /* partial re-sent to the parent      */
const bit<32> INC_EVENTS        = 10;

/* X-macros over the element names e00 .. eff (two hex digits): M(h, l) is
 * expanded once per element, with 0x##h##l its index. */
#define INC_HEX16(M, h) M(h,0) M(h,1) M(h,2) M(h,3) M(h,4) M(h,5) M(h,6) M(h,7) \
                        M(h,8) M(h,9) M(h,a) M(h,b) M(h,c) M(h,d) M(h,e) M(h,f)
#if INC_ELEMS == 16
#define INC_FOR_ELEMS(M) INC_HEX16(M,0)
#elif INC_ELEMS == 64
#define INC_FOR_ELEMS(M) INC_HEX16(M,0) INC_HEX16(M,1) INC_HEX16(M,2) INC_HEX16(M,3)
#elif INC_ELEMS == 256
#define INC_FOR_ELEMS(M) INC_HEX16(M,0) INC_HEX16(M,1) INC_HEX16(M,2) INC_HEX16(M,3) \
                         INC_HEX16(M,4) INC_HEX16(M,5) INC_HEX16(M,6) INC_HEX16(M,7) \
                         INC_HEX16(M,8) INC_HEX16(M,9) INC_HEX16(M,a) INC_HEX16(M,b) \
                         INC_HEX16(M,c) INC_HEX16(M,d) INC_HEX16(M,e) INC_HEX16(M,f)
#else
#error "INC_ELEMS must be 16, 64 or 256"
#endif

/* 20 bytes after the ETH+ header. */
header inc_t {
    bit<16> job_id;       /* aggregation job (controller's id)                */
    bit<16> slot;         /* slot within the job's pool, < the job's n_slots  */
    bit<1>  version;      /* which copy of the slot: (chunk / n_slots) % 2     */
    bit<1>  is_result;    /* 0 contribution (upwards), 1 result (downwards)   */
    bit<6>  _pad;
    bit<8>  level;        /* aggregation level that wrote it (0 = endpoint)   */
    bit<16> ranks;        /* endpoints whose vectors are summed in data        */
    bit<32> chunk;        /* chunk sequence number within the job             */
    bit<64> bitmap;       /* contributors the writing switch counted          */
}

#define INC_FIELD(h, l) bit<32> e##h##l;
header inc_data_t {
    INC_FOR_ELEMS(INC_FIELD)
}
#undef INC_FIELD

#endif
