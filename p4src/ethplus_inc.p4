/* ethplus_inc.p4 -- ethplus.p4 plus in-network aggregation (all-reduce).
 *
 * The same switch as ethplus.p4 (same tables, same names, same behaviour for
 * every other frame), with the aggregation of include/inc.p4 for frames of
 * EtherType 0x88B6 (docs/ethplus-header.md, "In-network aggregation").
 * A fabric runs it when an experiment asks for in-network collectives; the
 * program ethplus.p4 is built without these parts (ETHLAB_INC undefined).
 */
#define ETHLAB_INC 1
#include "ethplus.p4"
