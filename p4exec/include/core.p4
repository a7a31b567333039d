/* p4exec core library: the declarations every P4_16 program sees (P4_16 language specification,
 * "P4 core library"). Written for p4exec. */
#ifndef _CORE_P4_
#define _CORE_P4_

/* Standard parser errors, in the order that fixes their numeric codes (0 = NoError). */
error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

/* Input packet: what a parser reads from. */
extern packet_in {
    void extract<T>(out T hdr);
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    T lookahead<T>();
    void advance(in bit<32> sizeInBits);
    bit<32> length();
}

/* Output packet: what a deparser writes to. */
extern packet_out {
    void emit<T>(in T hdr);
}

/* Parser check: on a false condition set parser_error to err and go to reject. */
extern void verify(in bool check, in error toSignal);

/* Compile-time check: the program is refused when check is false; true otherwise, so that it can
 * initialise a constant. */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

/* The action that does nothing. */
@noWarn("unused")
action NoAction() {}

/* Match kinds every target knows. */
match_kind {
    exact,
    ternary,
    lpm
}

#endif  /* _CORE_P4_ */
