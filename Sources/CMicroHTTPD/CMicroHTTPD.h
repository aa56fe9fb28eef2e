// libmicrohttpd for Swift (HTTPConsole). Shims are `static inline`, prefixed `cmhd_`, and each says why
// it exists. The callbacks themselves are Swift (`@convention(c)`): they copy what MHD hands them or
// signal a waiting thread, nothing more.
#ifndef STUDIO_CMICROHTTPD_H
#define STUDIO_CMICROHTTPD_H
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

// What MHD says while it starts (why a bind or the TLS setup failed), for the error the operator sees.
// MHD keeps `cls` for the daemon's life and may call the logger from its threads later (a client's
// failed TLS handshake): `busy` lets one writer in at a time, and `cmhd_start` takes it for good once
// the start is over, so later messages are dropped and `text` can be read without a race.
struct cmhd_start_log {
    char text[1024];
    int busy;
};

// MHD's logger takes a va_list, which Swift cannot handle: formatted here, appended while there is room.
static inline void cmhd_log_during_start(void *cls, const char *format, va_list arguments) {
    struct cmhd_start_log *log = (struct cmhd_start_log *)cls;
    if (__atomic_exchange_n(&log->busy, 1, __ATOMIC_ACQUIRE)) return;
    size_t used = strnlen(log->text, sizeof log->text);
    if (used + 1 < sizeof log->text) vsnprintf(log->text + used, sizeof log->text - used, format, arguments);
    __atomic_store_n(&log->busy, 0, __ATOMIC_RELEASE);
}

// MHD decodes a request's path (and its query's keys and values) before the handler sees it, so
// `/api/v1/camera/pc2%2Fcam1/mode` (a capture node's camera `pc2/cam1`) would arrive as one more
// segment. This decoder does what MHD's own does but leaves `%2F` and `%25` escaped: the routes split the
// path on `/` first and then decode each segment (`HTTPRouteTable.match`), and the query's keys and values
// decode what is left (`HTTPRequests.values`), so `%252F` still means `%2F`.
static inline int cmhd_hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static inline size_t cmhd_unescape_keeping_slash(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls;
    (void)connection;
    size_t read = 0, written = 0;
    while (text[read] != '\0') {
        int high = text[read] == '%' ? cmhd_hex(text[read + 1]) : -1;
        int low = high >= 0 ? cmhd_hex(text[read + 2]) : -1;
        int value = high * 16 + low;
        if (high >= 0 && low >= 0 && value != '/' && value != '%') {
            text[written++] = (char)value;
            read += 3;
        } else {
            text[written++] = text[read++];
        }
    }
    text[written] = '\0';
    return written;
}

// MHD_start_daemon takes its options as variadic (option, value) pairs ending in MHD_OPTION_END, which
// Swift cannot call. This one fixes the threading model: MHD's own listening thread and one thread per
// connection (at most `connection_limit`), never a caller's thread; `timeout_seconds` closes a connection
// that neither sends nor takes data for that long. The console keeps its own account of connections
// (per address, by what each is doing): `accept` decides on each new one before MHD takes it, `notify`
// hears each start and close (MHD's own per-address limit is left off: the console's is the one).
// `address` is a sockaddr_in, or a sockaddr_in6 when `ipv6` is 1 (2: dual stack, IPv4 too, for `::`).
// With `tls_certificate` and `tls_key` (NUL-terminated PEM; NULL for plain HTTP) it speaks HTTPS only.
// MHD's messages during the start land in `log` (the logger first: MHD wants it before any other option).
static inline struct MHD_Daemon *cmhd_start(const struct sockaddr *address, int ipv6, unsigned int connection_limit,
                                            unsigned int timeout_seconds,
                                            const char *tls_certificate, const char *tls_key, struct cmhd_start_log *log,
                                            MHD_AcceptPolicyCallback accept, MHD_NotifyConnectionCallback notify,
                                            MHD_AccessHandlerCallback handler, void *handler_context,
                                            MHD_RequestCompletedCallback completed) {
    unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;
    if (ipv6 == 1) flags |= MHD_USE_IPv6;
    if (ipv6 == 2) flags |= MHD_USE_DUAL_STACK;
    struct MHD_Daemon *daemon;
    if (tls_certificate != NULL && tls_key != NULL) {
        daemon = MHD_start_daemon(flags | MHD_USE_TLS, 0, accept, handler_context, handler, handler_context,
                                  MHD_OPTION_EXTERNAL_LOGGER, cmhd_log_during_start, log,
                                  MHD_OPTION_SOCK_ADDR, address,
                                  MHD_OPTION_UNESCAPE_CALLBACK, cmhd_unescape_keeping_slash, NULL,
                                  MHD_OPTION_HTTPS_MEM_CERT, tls_certificate,
                                  MHD_OPTION_HTTPS_MEM_KEY, tls_key,
                                  MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                  MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                                  MHD_OPTION_NOTIFY_COMPLETED, completed, handler_context,
                                  MHD_OPTION_NOTIFY_CONNECTION, notify, handler_context,
                                  MHD_OPTION_END);
    } else {
        daemon = MHD_start_daemon(flags, 0, accept, handler_context, handler, handler_context,
                                  MHD_OPTION_EXTERNAL_LOGGER, cmhd_log_during_start, log,
                                  MHD_OPTION_SOCK_ADDR, address,
                                  MHD_OPTION_UNESCAPE_CALLBACK, cmhd_unescape_keeping_slash, NULL,
                                  MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                  MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                                  MHD_OPTION_NOTIFY_COMPLETED, completed, handler_context,
                                  MHD_OPTION_NOTIFY_CONNECTION, notify, handler_context,
                                  MHD_OPTION_END);
    }
    while (__atomic_exchange_n(&log->busy, 1, __ATOMIC_ACQUIRE)) {}
    return daemon;
}

// Whether this libmicrohttpd was built with TLS (GnuTLS) and with IPv6.
static inline int cmhd_supports_tls(void) { return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES; }
static inline int cmhd_supports_ipv6(void) { return MHD_is_feature_supported(MHD_FEATURE_IPv6) == MHD_YES; }

// MHD_get_daemon_info is variadic and answers a union: the port the daemon bound (the kernel's choice
// when asked for port 0, as tests do), 0 when unknown.
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

// A client's address (IPv4 or IPv6) as text in `buffer`. Returns 0, or -1 when it is neither.
static inline int cmhd_address_text(const struct sockaddr *address, char *buffer, socklen_t size) {
    if (address == NULL) return -1;
    if (address->sa_family == AF_INET) {
        return inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, size) ? 0 : -1;
    }
    if (address->sa_family == AF_INET6) {
        return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, size) ? 0 : -1;
    }
    return -1;
}

// MHD_get_connection_info is variadic and answers a union holding a sockaddr: the client's address as
// text in `buffer`, for the per-client request budget. Returns 0, or -1 when unknown.
static inline int cmhd_client_address(struct MHD_Connection *connection, char *buffer, socklen_t size) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL) return -1;
    return cmhd_address_text(info->client_addr, buffer, size);
}

// The connection's socket, which the console shuts down to end a connection from another thread (MHD
// has no call for that in thread-per-connection mode); -1 when unknown.
static inline int cmhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

// What the console stored for the connection when MHD announced it (MHD_CONNECTION_NOTIFY_STARTED), or
// NULL.
static inline void *cmhd_connection_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}
#endif
