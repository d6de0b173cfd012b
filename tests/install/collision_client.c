/* A host program with its own Vulkan and OpenCL (linked -lvulkan -lOpenCL)
 * that also uses libattnvk (issue #17): before the fix, attnvk's volk pointers
 * were global and took the place of the loader's functions, and
 * vkEnumerateInstanceVersion jumped to NULL. Calls into each API before and
 * after attnvk loads its own copies, then runs attention on the CPU device. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <attnvk/attnvk.h>
#include <vulkan/vulkan.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int host_apis(const char *when) {
    uint32_t version = 0;
    if (vkEnumerateInstanceVersion(&version) != VK_SUCCESS || version < VK_API_VERSION_1_0) {
        fprintf(stderr, "collision_client: vkEnumerateInstanceVersion failed %s\n", when);
        return 1;
    }
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkInstance inst;
    uint32_t gpus = 0;
    if (vkCreateInstance(&ci, NULL, &inst) == VK_SUCCESS) {
        vkEnumeratePhysicalDevices(inst, &gpus, NULL);
        vkDestroyInstance(inst, NULL);
    }
    cl_uint platforms = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &platforms); /* CL_PLATFORM_NOT_FOUND_KHR without ICDs is fine */
    printf("%s: Vulkan %u.%u, %u physical device(s); OpenCL %u platform(s) (%d)\n", when,
           VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version), gpus, platforms, err);
    return 0;
}

int main(void) {
    if (host_apis("before attnvk")) return 1;

    attnvk_context *ctx = NULL;
    attnvk_device *dev = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return fprintf(stderr, "%s\n", attnvk_last_error()), 1;
    for (int a = 0; a < ATTNVK_API_COUNT; a++) {
        const char *why = NULL;
        attnvk_status s = attnvk_api_status(ctx, (attnvk_api)a, &why);
        printf("attnvk %s: %s%s%s\n", attnvk_api_name((attnvk_api)a), attnvk_status_name(s), why ? " " : "", why ? why : "");
    }
    int cpu;
    if (attnvk_device_select(ctx, "cpu", &cpu, 1) != 1 || attnvk_device_open(ctx, cpu, &dev) != ATTNVK_OK)
        return fprintf(stderr, "no CPU device: %s\n", attnvk_last_error()), 1;
    attnvk_problem p = {.batch = 1, .heads = 2, .kv_heads = 2, .seq_q = 16, .seq_kv = 16, .head_dim = 32};
    size_t n = attnvk_q_elements(&p);
    float *q = malloc(n * sizeof *q), *k = malloc(n * sizeof *k), *v = malloc(n * sizeof *v), *o = malloc(n * sizeof *o);
    attnvk_fill_random(q, n, 4), attnvk_fill_random(k, n, 5), attnvk_fill_random(v, n, 6);
    attnvk_status s = attnvk_attention_host(dev, &p, NULL, q, k, v, o, NULL, NULL, NULL);
    attnvk_check c = attnvk_check_output(&p, q, k, v, o, NULL, 0);
    printf("attnvk on the CPU: %s, rel L2 %.3g\n", attnvk_status_name(s), c.rel_l2);
    free(q), free(k), free(v), free(o);
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    if (s != ATTNVK_OK || !c.passed) return 1;

    return host_apis("after attnvk");
}
