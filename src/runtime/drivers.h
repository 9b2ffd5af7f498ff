/* drivers: every subsystem of the runtime, in the order the host calls
 * them (design §4.3): the list the command line and simulated nodes
 * open their hosts with (tend_host_config.drivers). */
#ifndef TEND_DRIVERS_H
#define TEND_DRIVERS_H

#include "runtime/core/driver.h"

/* NULL-ended. */
extern const tend_driver *const tend_drivers[];

#endif
