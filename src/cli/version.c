/* `kestrel --version`: the version and the build, from build/gen/kestrel_build.h, which
 * packaging/build-info.sh writes at each build (git describe, the commit's date, the
 * day of the build). */
#include <stdio.h>

#include "cli/commands.h"
#include "kestrel_build.h"

int cmd_version(void)
{
    printf("kestrel %s\nbuild: %s\n", KESTREL_VERSION, KESTREL_BUILD);
    return 0;
}
