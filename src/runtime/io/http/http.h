/* http: HTTP requests made by actors, on libcurl's multi-socket API driven
 * by the host's own libuv loop (no thread, no blocking): a uv_poll_t per
 * socket curl names, one uv_timer_t for curl's timeout.
 *
 * A request (tend_http_req) is made by an actor that then waits for it as
 * for an ask (a promise, no timer of its own: curl enforces the timeout).
 * When curl is done with it (a response, or a transport failure), the
 * promise is resolved and the actor wakes; the result stays in the record
 * for the API to read. When the actor dies or restarts first, the request
 * leaves the multi handle at once (its sockets closed by curl) and nothing
 * wakes anyone later. The record is freed when curl is done with it and
 * the Lua side let go of it (tend_http_release), whichever is last.
 *
 * curl is initialised at the first request and shut down at host close
 * (every request still in flight is dropped then). */
#ifndef TEND_HTTP_H
#define TEND_HTTP_H

#include <lua.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/core/host.h"
#include "runtime/tend.h" /* tend_http_spec */

#define TEND_HTTP_MAX_HEADER_BYTES 65536 /* response headers, all lines */
#define TEND_HTTP_MAX_HEADERS 256        /* response header lines */

/* Starts spec for the current actor a, which then waits on the promise
 * armed here (the caller yields with tend_sched_wait(TEND_WAIT_ASK)); the
 * wake value is an integer, meaningless: read the result with
 * tend_http_error and tend_http_push_response. Sets *slot (the Lua
 * handle's pointer) to the record before arming the promise, which may
 * raise. Returns the record, or NULL with an error message pushed
 * (nothing left behind). */
tend_http_req *tend_http_start(lua_State *L, tend_host *h, tend_actor *a,
                               const tend_http_spec *spec,
                               tend_http_req **slot);
/* Why r failed (curl's text, or a bound that was passed), or NULL when it
 * has a response. A request still in flight is abandoned first. */
const char *tend_http_error(tend_http_req *r);
/* Pushes the response of r (error NULL): {status, headers, body}; the
 * record's copy of it is freed (it is read once). */
void tend_http_push_response(lua_State *L, tend_http_req *r);
/* The Lua side let go of r: in flight, it is abandoned; then freed. */
void tend_http_release(tend_http_req *r);
/* How many requests are in flight now (tend.http.stats and the specs). */
int tend_http_in_flight(const tend_host *h);

/* Its restarts and deaths (an owner's calls go) and the host's close
 * (driver.h). */
extern const tend_driver tend_http_driver;

#endif
