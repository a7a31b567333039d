// expect-error: 2:1: psa.p4
#include <psa.p4>
// other architectures are named as unsupported (p4exec implements v1model only)
