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

#endif
