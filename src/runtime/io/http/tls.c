/* tls: the OpenSSL context of an HTTPS server (see server.h): the
 * certificate chain and key read from PEM files, ALPN offering h2 then
 * http/1.1 (H2O's list), so a TLS client gets HTTP/2 when it asks for it. */
#include <errno.h>
#include <lua.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <string.h>

#include "runtime/io/http/server_int.h"

/* Pushes "tls.opt: what (path): OpenSSL's reason" and returns NULL. */
static SSL_CTX *fail(lua_State *L, SSL_CTX *ctx, const char *opt,
                     const char *what, const char *path) {
  unsigned long e = ERR_get_error();
  char why[256] = "";
  if (e != 0) ERR_error_string_n(e, why, sizeof why);
  ERR_clear_error();
  lua_pushfstring(L, "tls.%s: %s (%s)%s%s", opt, what, path, *why ? ": " : "",
                  why);
  SSL_CTX_free(ctx);
  return NULL;
}

SSL_CTX *tend_httpd_tls(lua_State *L, const char *cert, const char *key) {
  FILE *f = fopen(cert, "r");
  if (f == NULL) {
    lua_pushfstring(L, "tls.cert: cannot read %s: %s", cert, strerror(errno));
    return NULL;
  }
  fclose(f);
  f = fopen(key, "r");
  if (f == NULL) {
    lua_pushfstring(L, "tls.key: cannot read %s: %s", key, strerror(errno));
    return NULL;
  }
  fclose(f);
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == NULL) return fail(L, NULL, "cert", "no TLS context", cert);
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1)
    return fail(L, ctx, "cert", "not a PEM certificate chain", cert);
  if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
    return fail(L, ctx, "key",
                ERR_GET_REASON(ERR_peek_error()) == X509_R_KEY_VALUES_MISMATCH
                    ? "does not match the certificate"
                    : "not a PEM private key",
                key);
  if (SSL_CTX_check_private_key(ctx) != 1)
    return fail(L, ctx, "key", "does not match the certificate", key);
  h2o_ssl_register_alpn_protocols(ctx, h2o_alpn_protocols);
  return ctx;
}
