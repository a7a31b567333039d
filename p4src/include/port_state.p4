/* port_state.p4 -- per-port state shared by ingress and egress.
 *
 * These two registers are declared at program scope (not inside a control)
 * because both halves of the pipeline use them: egress learns queue depths
 * as packets leave, ingress reads them to steer new flowlets and probes.
 * p4c names them without a control prefix: "port_down", "port_qdepth".
 */
#ifndef ETHLAB_PORT_STATE_P4
#define ETHLAB_PORT_STATE_P4

/* Liveness bitmap, one bit per port: 1 = down. Written by the controller
 * (and by the switch's port-status handling when it has one). Zero means
 * "up" so a freshly loaded switch forwards before anyone writes it. Every
 * path-selection mode consults it on every packet, so a failed link is
 * avoided from the next packet on, before groups are recomputed. */
register<bit<1>>(NUM_PORTS) port_down;

/* Last egress queue depth (packets, from deq_qdepth) seen on each port.
 * "Least loaded" in flowlet and adaptive modes means the smallest value. */
register<qdepth_t>(NUM_PORTS) port_qdepth;

/* Switch-local load (lb_tuning LBF_LOCAL_LOAD): packets ingress sent to a
 * port since its last departure. Egress zeroes it as each packet leaves
 * (port_qdepth then holds the depth behind that packet), so depth + pending
 * tracks the queue between two departures, and a tail drop is forgotten at
 * the next one. port_deq counts departures; a flow's ticket (the count its
 * last packet will leave at) tells ingress when that packet has gone. */
register<qdepth_t>(NUM_PORTS) port_pending;
register<bit<32>>(NUM_PORTS) port_deq;

#endif
