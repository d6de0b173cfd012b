/* attnvk_problem_validate in two halves, for callers that split a problem
 * before any kernel sees it (ring attention runs chunks of one sequence). */
#ifndef ATTNVK_CORE_PROBLEM_H
#define ATTNVK_CORE_PROBLEM_H

#include "attnvk/attnvk.h"

/* Every shape and feature rule: one-line errors. */
attnvk_status avk_problem_validate_rules(const attnvk_problem *p);
/* What one kernel launch can index (32-bit sequence positions and tensor offsets). */
attnvk_status avk_problem_validate_kernel_limits(const attnvk_problem *p);

#endif
