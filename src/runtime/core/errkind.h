/* errkind: the kinds of error value tend raises, in one list (libuv's
 * UV_ERRNO_MAP is the model). Each row gives
 *   XX(ID, "Name", directive, brief)
 * ID: the enum's name (TEND_ERR_ID); "Name": the kind an error value holds
 * (err.kind); directive: what the default decider does with a child that
 * fails with it (STOP or RESTART: a tend_directive without its TEND_
 * prefix; a kind not in the list restarts; tend.describe words it from this
 * column); brief: 1 when the environment refused a configuration (a server
 * down, a port taken): the host prints one line for it, not a traceback
 * (tend_error_push_brief). error.c owns the names; Lua reads them as
 * require "tend.kinds" (K.Timeout == "Timeout"). Kinds a user raises
 * (tend.error("Mine")) need no row. */
#ifndef TEND_ERRKIND_H
#define TEND_ERRKIND_H

#define TEND_ERROR_KIND_MAP(XX)                                              \
  /* a raised value that is no error value (error("..."), a number...) */    \
  XX(ERROR, "Error", RESTART, 0)                                             \
  /* the actor's lifecycle */                                                \
  XX(INIT_ERROR, "InitError", STOP, 0)   /* factory or pre_start failed */   \
  XX(KILLED, "Killed", STOP, 0)          /* ref:kill(), chaos kill */        \
  XX(DEATH_PACT, "DeathPact", STOP, 0)   /* a watched actor ended */         \
  XX(ESCALATED, "Escalated", RESTART, 0) /* a child's failure, passed up */  \
  XX(STOPPED, "Stopped", RESTART, 0)     /* a permanent child stopped */     \
  XX(BUDGET_EXCEEDED, "BudgetExceeded", RESTART, 0) /* max_message_time */   \
  XX(BAD_YIELD, "BadYield", RESTART, 0)      /* a yield tend did not make */ \
  XX(INTERRUPTED, "Interrupted", RESTART, 0) /* Ctrl-C at the REPL */        \
  XX(CODE_CHANGE, "CodeChange", RESTART, 0)  /* tend.reload's restart */     \
  XX(RETRIES_EXHAUSTED, "RetriesExhausted", RESTART, 0) /* backoff */        \
  /* messages */                                                             \
  XX(MAILBOX_OVERFLOW, "MailboxOverflow", RESTART, 0)                        \
  XX(STASH_OVERFLOW, "StashOverflow", RESTART, 0)                            \
  XX(NOT_COPYABLE, "NotCopyable", RESTART, 0) /* --copy-messages */          \
  XX(TIMEOUT, "Timeout", RESTART, 0)          /* an ask not answered */      \
  XX(NO_ACTOR, "NoActor", RESTART, 0)         /* an ask of a dead ref */     \
  XX(ASK_FAILED, "AskFailed", RESTART, 0)     /* the asked actor ended */    \
  /* the codec of node messages */                                           \
  XX(NOT_SERIALIZABLE, "NotSerializable", RESTART, 0)                        \
  XX(MESSAGE_TOO_LARGE, "MessageTooLarge", RESTART, 0)                       \
  XX(BAD_MESSAGE, "BadMessage", RESTART, 0)                                  \
  /* OS processes */                                                         \
  XX(SPAWN_ERROR, "SpawnError", RESTART, 0)                                  \
  XX(READY_TIMEOUT, "ReadyTimeout", RESTART, 0)                              \
  XX(PROCESS_EXIT, "ProcessExit", RESTART, 0)                                \
  XX(PROCESS_SIGNAL, "ProcessSignal", RESTART, 0)                            \
  /* the network */                                                          \
  XX(LISTEN_ERROR, "ListenError", RESTART, 1)                                \
  XX(CONNECT_ERROR, "ConnectError", RESTART, 0)                              \
  XX(NOT_CONNECTED, "NotConnected", RESTART, 0)                              \
  XX(OVERLOADED, "Overloaded", RESTART, 0) /* a TCP write queue full */      \
  XX(HTTP_ERROR, "HttpError", RESTART, 0)                                    \
  /* nodes */                                                                \
  XX(NODE_ERROR, "NodeError", RESTART, 1)                                    \
  XX(NODE_DOWN, "NodeDown", RESTART, 0)                                      \
  XX(NATS_ERROR, "NatsError", RESTART, 1)                                    \
  /* tend.chaos: crash's and crash_on's default, flaky's */                  \
  XX(CHAOS_CRASH, "ChaosCrash", RESTART, 0)                                  \
  XX(CHAOS_ERROR, "ChaosError", RESTART, 0)                                  \
  /* a run's checks (tend.invariant, tend.eventually; no progress) */        \
  XX(INVARIANT_FAILED, "InvariantFailed", RESTART, 0)                        \
  XX(EVENTUALLY_FAILED, "EventuallyFailed", RESTART, 0)                      \
  XX(NO_PROGRESS, "NoProgress", RESTART, 0)

typedef enum tend_error_kind {
#define TEND_ERR_ENUM(id, name, directive, brief) TEND_ERR_##id,
  TEND_ERROR_KIND_MAP(TEND_ERR_ENUM)
#undef TEND_ERR_ENUM
      TEND_ERR_KINDS /* their number */
} tend_error_kind;

/* The kind's name ("Timeout"), by its ID. */
extern const char *const tend_error_kind_names[TEND_ERR_KINDS];
#define TEND_ERR_NAME(id) (tend_error_kind_names[TEND_ERR_##id])

#endif
