//go:build linux && cgo && rdma

#include <errno.h>
#include <string.h>
#include "ibv.h"

struct ibv_device **dmb_get_device_list(int *n)
{
	return ibv_get_device_list(n);
}

struct ibv_mr *dmb_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int remote)
{
	int access = IBV_ACCESS_LOCAL_WRITE;
	if (remote)
		access |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	return ibv_reg_mr(pd, addr, len, access);
}

int dmb_query_port(struct ibv_context *c, uint8_t port, uint16_t *lid, int *mtu, int *state)
{
	struct ibv_port_attr a;
	int rc = ibv_query_port(c, port, &a);
	if (rc)
		return rc;
	*lid = a.lid;
	*mtu = a.active_mtu;
	*state = a.state;
	return 0;
}

int dmb_max_rd_atomic(struct ibv_context *c, int *rd_atomic, int *atomic_cap)
{
	struct ibv_device_attr a;
	int rc = ibv_query_device(c, &a);
	if (rc)
		return rc;
	*rd_atomic = a.max_qp_rd_atom < a.max_qp_init_rd_atom ? a.max_qp_rd_atom : a.max_qp_init_rd_atom;
	*atomic_cap = a.atomic_cap;
	return 0;
}

struct ibv_qp *dmb_create_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a;
	memset(&a, 0, sizeof a);
	a.send_cq = cq;
	a.recv_cq = cq;
	a.qp_type = IBV_QPT_RC;
	a.sq_sig_all = 0;
	a.cap.max_send_wr = DMB_MAX_WR;
	a.cap.max_recv_wr = 1;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	return ibv_create_qp(pd, &a);
}

int dmb_qp_init(struct ibv_qp *qp, uint8_t port)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = port;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int dmb_qp_rtr(struct ibv_qp *qp, uint8_t port, int mtu, uint32_t qpn, uint32_t psn,
	       uint16_t lid, const uint8_t *gid, int use_gid, int gid_index, int rd_atomic)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = qpn;
	a.rq_psn = psn;
	a.max_dest_rd_atomic = rd_atomic;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = lid;
	a.ah_attr.port_num = port;
	if (use_gid) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, gid, 16);
		a.ah_attr.grh.sgid_index = gid_index;
		a.ah_attr.grh.hop_limit = 1;
	}
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

int dmb_qp_rts(struct ibv_qp *qp, uint32_t psn, int rd_atomic)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = psn;
	a.max_rd_atomic = rd_atomic;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* dmb_post links n work requests into one list, signals only the last,
 * and rings one doorbell for all of them. On failure *bad is the index
 * of the first request not posted. */
int dmb_post(struct ibv_qp *qp, const struct dmb_wr *w, int n, uint64_t id, int *bad)
{
	struct ibv_send_wr wrs[DMB_MAX_WR], *badwr = NULL;
	struct ibv_sge sges[DMB_MAX_WR];
	int i, rc;

	if (n < 1 || n > DMB_MAX_WR)
		return EINVAL;
	memset(wrs, 0, sizeof(wrs[0]) * n);
	for (i = 0; i < n; i++) {
		sges[i].addr = w[i].local;
		sges[i].length = w[i].len;
		sges[i].lkey = w[i].lkey;
		wrs[i].wr_id = id;
		wrs[i].sg_list = &sges[i];
		wrs[i].num_sge = 1;
		wrs[i].opcode = w[i].opcode;
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
		if (w[i].opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w[i].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wrs[i].wr.atomic.remote_addr = w[i].remote;
			wrs[i].wr.atomic.rkey = w[i].rkey;
			wrs[i].wr.atomic.compare_add = w[i].compare_add;
			wrs[i].wr.atomic.swap = w[i].swap;
		} else {
			wrs[i].wr.rdma.remote_addr = w[i].remote;
			wrs[i].wr.rdma.rkey = w[i].rkey;
		}
	}
	wrs[n - 1].send_flags = IBV_SEND_SIGNALED;
	rc = ibv_post_send(qp, wrs, &badwr);
	*bad = badwr ? (int)(badwr - wrs) : -1;
	return rc;
}

/* dmb_poll takes up to n completions (at most 16) off cq. */
int dmb_poll(struct ibv_cq *cq, int n, uint64_t *ids, int *status)
{
	struct ibv_wc wc[16];
	int i, got;

	if (n > 16)
		n = 16;
	got = ibv_poll_cq(cq, n, wc);
	for (i = 0; i < got; i++) {
		ids[i] = wc[i].wr_id;
		status[i] = wc[i].status;
	}
	return got;
}
