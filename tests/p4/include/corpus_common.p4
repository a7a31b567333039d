// Shared declarations for corpus programs that test #include of local files.
#ifndef CORPUS_COMMON_P4
#define CORPUS_COMMON_P4

#define ETHERTYPE_TEST 0x88B5
#define OUT_PORT 9w4

header pair_t {
    bit<8> a;
    bit<8> b;
}

#endif
