#ifndef ATTNVK_CLI_JSON_H
#define ATTNVK_CLI_JSON_H

#include "attnvk/attnvk.h"

#include <cjson/cJSON.h>

/* One device as `attnvk devices --json` prints it (the results file adds "group"). */
cJSON *cli_device_json(const attnvk_device_info *d);

#endif
