/* Programs are compiled at run time for the device at hand (clBuildProgram
 * with -D options from the tuning table) and their binaries cached on disk,
 * keyed by device name, driver version, source hash and options. */
#ifndef ATTNVK_CL_PROGRAM_H
#define ATTNVK_CL_PROGRAM_H

#include "opencl/cl_device.h"

/* Embedded kernel sources: the .cl files under opencl/ (runtime/opencl/CMakeLists.txt). */
typedef enum avk_cl_source {
    AVK_CL_SRC_COMMON = 0,
    AVK_CL_SRC_CONTRACT,
    AVK_CL_SRC_FLASH_TILED,
    AVK_CL_SRC_MMA_OPS,
    AVK_CL_SRC_FLASH_MMA,
    AVK_CL_SRC_FLASH_DECODE,
    AVK_CL_SRC_SPLIT_REDUCE,
    AVK_CL_SRC_SOFTMAX,
    AVK_CL_SRC_FLASH_BWD,
    AVK_CL_SRC_FLASH_BWD_MMA,
    AVK_CL_SRC_RING_MERGE,
    AVK_CL_SRC_COUNT
} avk_cl_source;

/* Builds (or fetches) the program made of the given sources, in order,
 * after the contract prelude (kernel_flags.h and the avk_kernel_args struct
 * expanded from kernel_args.def).
 * The program stays owned by dev. COMPILE with the build log on failure.
 * $ATTNVK_OPENCL_BUILD_OPTIONS is appended to the options (for example
 * -cl-nv-verbose) and $ATTNVK_OPENCL_BUILD_LOG=1 prints every build log. */
attnvk_status avk_cl_program(avk_bdev *dev, const avk_cl_source *sources, int count, const char *options,
                             cl_program *out);
void avk_cl_release_programs(avk_bdev *dev);

/* Creates a kernel and checks that the device can run it with wg items. */
attnvk_status avk_cl_kernel(avk_bdev *dev, cl_program program, const char *name, size_t wg, cl_kernel *out);

#endif
