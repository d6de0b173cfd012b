/* Ring attention's transport among CUDA devices (cuda_ring_comm.c): NCCL
 * send/recv when every rank has its own GPU, device copies ("cuda-copy")
 * when ranks share one, which NCCL refuses. */
#ifndef ATTNVK_CUDA_RING_COMM_H
#define ATTNVK_CUDA_RING_COMM_H

#include "core/ring_comm.h"

extern const avk_ring_comm_ops avk_cuda_ring_comm;

#endif
