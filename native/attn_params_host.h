/* Host side of avk_attn_params (C17 only; the kernel compilers never see it):
 * the contract's scalars as core fills them (core/kernel_args.h) copied into
 * the native struct. Device addresses stay with each backend. */
#ifndef ATTNVK_ATTN_PARAMS_HOST_H
#define ATTNVK_ATTN_PARAMS_HOST_H

#include "attn_params.h"
#include "core/kernel_args.h"

static inline void avk_attn_params_set_args(avk_attn_params *P, const avk_kernel_args *a)
{
#define AVK_ARG(type, name) P->name = a->name;
#include "contract/kernel_args.def"
#undef AVK_ARG
}

#endif
