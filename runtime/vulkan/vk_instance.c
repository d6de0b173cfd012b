/* One VkInstance per process: volk loads the loader, the optional Khronos
 * validation layer reports through debug utils, and every physical device of
 * Vulkan 1.1 or newer with a compute queue becomes an attnvk device. */
#include "vulkan/vk_internal.h"
#include "vulkan/vk_profile.h"
#include "vulkan/vk_validation.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vk_state avk_vk;
static atomic_uint validation_errors;

int avk_vk_validation_enabled(void) { return avk_vk.validation; }
unsigned avk_vk_validation_errors(void) { return atomic_load(&validation_errors); }

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                VkDebugUtilsMessageTypeFlagsEXT types,
                                                const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)types;
    (void)user;
    int error = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0;
    if (error) atomic_fetch_add(&validation_errors, 1u);
    fprintf(stderr, "vulkan validation %s: %s\n", error ? "error" : "warning",
            data && data->pMessage ? data->pMessage : "(no message)");
    return VK_FALSE;
}

static int layer_present(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkLayerProperties *layers = calloc(n, sizeof *layers);
    int found = 0;
    if (layers && vkEnumerateInstanceLayerProperties(&n, layers) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; ++i) found = strcmp(layers[i].layerName, name) == 0;
    free(layers);
    return found;
}

static attnvk_status create_instance(void)
{
    uint32_t loader_version = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loader_version);
    if (loader_version < VK_API_VERSION_1_1)
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "vulkan: the loader supports only Vulkan %u.%u (1.1 needed)",
                        VK_API_VERSION_MAJOR(loader_version), VK_API_VERSION_MINOR(loader_version));
    const char *env = getenv("ATTNVK_VK_VALIDATION");
    avk_vk.validation = env && strcmp(env, "1") == 0;
    const char *layers[1] = {"VK_LAYER_KHRONOS_validation"};
    const char *exts[1] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    if (avk_vk.validation && !layer_present(layers[0]))
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE,
                        "vulkan: ATTNVK_VK_VALIDATION=1 but VK_LAYER_KHRONOS_validation is not installed");
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "attnvk",
                             .applicationVersion = VK_MAKE_API_VERSION(0, 0, 1, 0),
                             .pEngineName = "attnvk",
                             .apiVersion = loader_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3
                                           : loader_version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2
                                                                                  : VK_API_VERSION_1_1};
    VkDebugUtilsMessengerCreateInfoEXT dbg = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_message};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pNext = avk_vk.validation ? &dbg : NULL,
                               .pApplicationInfo = &app,
                               .enabledLayerCount = avk_vk.validation ? 1u : 0u,
                               .ppEnabledLayerNames = layers,
                               .enabledExtensionCount = avk_vk.validation ? 1u : 0u,
                               .ppEnabledExtensionNames = exts};
    VkResult r = vkCreateInstance(&ci, NULL, &avk_vk.instance);
    if (r != VK_SUCCESS) {
        vk_status(r, "vkCreateInstance");
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "vulkan: vkCreateInstance failed: %s", vk_result_name(r));
    }
    volkLoadInstanceOnly(avk_vk.instance);
    if (avk_vk.validation) {
        r = vkCreateDebugUtilsMessengerEXT(avk_vk.instance, &dbg, NULL, &avk_vk.messenger);
        if (r != VK_SUCCESS) return vk_status(r, "vkCreateDebugUtilsMessengerEXT");
    }
    return ATTNVK_OK;
}

static void vk_shutdown(void);

static attnvk_status vk_init(int *count)
{
    *count = 0;
    if (avk_vk.instance) {
        *count = avk_vk.device_count;
        return ATTNVK_OK;
    }
    const vk_profile *profile; /* a name that is no profile fails before anything loads */
    attnvk_status s = vk_profile_selected(&profile);
    if (s != ATTNVK_OK) return s;
    VkResult r = volkInitialize();
    if (r != VK_SUCCESS)
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "vulkan: cannot load the Vulkan loader (libvulkan.so.1): %s",
                        vk_result_name(r));
    s = create_instance();
    if (s != ATTNVK_OK) {
        vk_shutdown();
        return s;
    }
    uint32_t n = 0;
    r = vkEnumeratePhysicalDevices(avk_vk.instance, &n, NULL);
    VkPhysicalDevice *phys = n ? calloc(n, sizeof *phys) : NULL;
    avk_vk.devices = n ? calloc(n, sizeof *avk_vk.devices) : NULL;
    if (r == VK_SUCCESS && n && (!phys || !avk_vk.devices)) r = VK_ERROR_OUT_OF_HOST_MEMORY;
    if (r == VK_SUCCESS && n) r = vkEnumeratePhysicalDevices(avk_vk.instance, &n, phys);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(phys);
        s = vk_status(r, "vkEnumeratePhysicalDevices");
        vk_shutdown();
        return s == ATTNVK_ERROR_BACKEND ? ATTNVK_ERROR_UNAVAILABLE : s;
    }
    for (uint32_t i = 0; i < n; ++i) {
        vk_caps *c = &avk_vk.devices[avk_vk.device_count];
        memset(c, 0, sizeof *c);
        c->profile = profile;
        if (vk_probe_caps(phys[i], c) == ATTNVK_OK) ++avk_vk.device_count; /* else skipped: too old or no compute */
    }
    free(phys);
    avk_clear_error();
    *count = avk_vk.device_count;
    return ATTNVK_OK;
}

static void vk_shutdown(void)
{
    if (avk_vk.messenger) vkDestroyDebugUtilsMessengerEXT(avk_vk.instance, avk_vk.messenger, NULL);
    if (avk_vk.instance) vkDestroyInstance(avk_vk.instance, NULL);
    free(avk_vk.devices);
    int validation = avk_vk.validation;
    memset(&avk_vk, 0, sizeof avk_vk);
    avk_vk.validation = validation;

}

/* vtable pieces defined here, gathered in vk_backend.c */
attnvk_status avk_vk_init(int *count) { return vk_init(count); }
void avk_vk_shutdown(void) { vk_shutdown(); }
