/* drivers: the runtime's subsystems, plugged in (see drivers.h). Like
 * Lua's linit.c, the one file that names them all. */
#include "runtime/drivers.h"

#include "runtime/io/http/http.h"
#include "runtime/io/http/server.h"
#include "runtime/io/process/process.h"
#include "runtime/io/tcp/tcp.h"
#include "runtime/nodes/nats.h"
#include "runtime/nodes/schedulers.h"
#include "runtime/nodes/simnodes.h"
#include "runtime/supervision/backoff_sup.h"
#include "runtime/supervision/names.h"
#include "runtime/supervision/rtimeout.h"
#include "runtime/supervision/stash.h"
#include "runtime/supervision/supervise.h"
#include "runtime/supervision/typed.h"

const tend_driver *const tend_drivers[] = {
    &tend_supervise_driver, &tend_restart_driver,    &tend_backoff_driver,
    &tend_typed_driver,     &tend_names_driver,      &tend_rtimeout_driver,
    &tend_stash_driver,     &tend_process_driver,    &tend_tcp_driver,
    &tend_http_driver,      &tend_httpd_driver,      &tend_nats_driver,
    &tend_simnodes_driver,  &tend_schedulers_driver, NULL};
