/* nats_floor: what NATS itself allows for a remote pingpong, without
 * tend (docs/benchmarks.md, "In short"): two processes, each a cnats connection on its own
 * libuv loop through cnats's libuv adapter (as tend's nodes), answer each
 * other's 1-byte message through a nats-server, N round trips.
 *   cc -O2 -o /tmp/nats_floor bench/nats_floor.c -lnats -luv
 *   nats-server -a 127.0.0.1 -p 14222 &
 *   N=5000 /tmp/nats_floor nats://127.0.0.1:14222
 * Prints messages per second in the peers' format (make bench runs it
 * beside remote pingpong, impl=nats) and microseconds per hop. */
#include <nats/adapters/libuv.h>
#include <nats/nats.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

static natsConnection *nc;
static const char *out; /* the subject the answers go to */
static int pinger, n, left;
static uint64_t t0;

static void on_msg(natsConnection *c, natsSubscription *s, natsMsg *m,
                   void *closure) {
  (void)c;
  (void)s;
  (void)closure;
  natsMsg_Destroy(m);
  if (pinger && --left == 0) {
    double secs = (double)(uv_hrtime() - t0) / 1e9;
    printf("bench=remote_pingpong impl=nats count=%d secs=%.4f rate=%.0f "
           "us_per_hop=%.1f\n",
           2 * n, secs, 2 * n / secs, secs * 1e6 / (2 * n));
    exit(0);
  }
  natsConnection_Publish(nc, out, "x", 1);
}

static void run(const char *url, const char *in, const char *to, int ping) {
  uv_loop_t *loop = uv_default_loop();
  natsOptions *opts;
  natsSubscription *sub;
  out = to;
  pinger = ping;
  natsLibuv_Init();
  natsLibuv_SetThreadLocalLoop(loop);
  natsOptions_Create(&opts);
  natsOptions_SetURL(opts, url);
  natsOptions_SetSendAsap(opts, true);
  natsOptions_SetEventLoop(opts, loop, natsLibuv_Attach, natsLibuv_Read,
                           natsLibuv_Write, natsLibuv_Detach);
  if (natsConnection_Connect(&nc, opts) != NATS_OK) {
    fprintf(stderr, "nats_floor: cannot connect to %s\n", url);
    exit(1);
  }
  natsConnection_Subscribe(&sub, nc, in, on_msg, NULL);
  natsConnection_Flush(nc);
  if (ping) {
    sleep(1); /* the other one subscribes */
    left = n;
    t0 = uv_hrtime();
    natsConnection_Publish(nc, out, "x", 1);
  }
  uv_run(loop, UV_RUN_DEFAULT);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: N=5000 nats_floor nats://host:port\n");
    return 2;
  }
  n = getenv("N") ? atoi(getenv("N")) : 5000;
  if (fork() == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* goes with the pinger */
    run(argv[1], "floor.b", "floor.a", 0);
    return 0;
  }
  run(argv[1], "floor.a", "floor.b", 1);
  return 0;
}
