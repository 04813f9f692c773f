/* A thin layer over libibverbs for the verbs fabric: calls that are
 * inline functions or macros in verbs.h, and the loops that build a
 * doorbell batch and poll completions, so that Go makes one cgo call
 * for each. */
#ifndef DMBENCH_IBV_H
#define DMBENCH_IBV_H

#include <stdint.h>
#include <infiniband/verbs.h>

/* One work request of a doorbell batch: addresses, keys and operands
 * only, so Go can pass an array of them without Go pointers inside. */
struct dmb_wr {
	uint64_t local;
	uint64_t remote;
	uint64_t compare_add;
	uint64_t swap;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t len;
	uint32_t opcode;
};

/* The most work requests one dmb_post links; the QP's send queue holds
 * as many. */
#define DMB_MAX_WR 32

struct ibv_device **dmb_get_device_list(int *n);
struct ibv_mr *dmb_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int remote);
int dmb_query_port(struct ibv_context *c, uint8_t port, uint16_t *lid, int *mtu, int *state);
int dmb_max_rd_atomic(struct ibv_context *c, int *rd_atomic, int *atomic_cap);
struct ibv_qp *dmb_create_qp(struct ibv_pd *pd, struct ibv_cq *cq);
int dmb_qp_init(struct ibv_qp *qp, uint8_t port);
int dmb_qp_rtr(struct ibv_qp *qp, uint8_t port, int mtu, uint32_t qpn, uint32_t psn,
	       uint16_t lid, const uint8_t *gid, int use_gid, int gid_index, int rd_atomic);
int dmb_qp_rts(struct ibv_qp *qp, uint32_t psn, int rd_atomic);
int dmb_post(struct ibv_qp *qp, const struct dmb_wr *w, int n, uint64_t id, int *bad);
int dmb_poll(struct ibv_cq *cq, int n, uint64_t *ids, int *status);

#endif
