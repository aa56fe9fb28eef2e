// libmicrohttpd for Swift (HTTPConsole). Shims are `static inline`, prefixed `cmhd_`, and each says why
// it exists. The callbacks themselves are Swift (`@convention(c)`): they copy what MHD hands them or
// signal a waiting thread, nothing more.
#ifndef STUDIO_CMICROHTTPD_H
#define STUDIO_CMICROHTTPD_H
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

// MHD_start_daemon takes its options as variadic (option, value) pairs ending in MHD_OPTION_END, which
// Swift cannot call. This one fixes the threading model: MHD's own listening thread and one thread per
// connection (at most `connection_limit`, `per_address_limit` from one address), never a caller's thread;
// `timeout_seconds` closes a connection that neither sends nor takes data for that long.
static inline struct MHD_Daemon *cmhd_start(const struct sockaddr_in *address, unsigned int connection_limit,
                                            unsigned int per_address_limit, unsigned int timeout_seconds,
                                            MHD_AccessHandlerCallback handler, void *handler_context,
                                            MHD_RequestCompletedCallback completed, void *completed_context) {
    return MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL,
                            0, NULL, NULL, handler, handler_context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            MHD_OPTION_END);
}

// MHD_get_daemon_info is variadic and answers a union: the port the daemon bound (the kernel's choice
// when asked for port 0, as tests do), 0 when unknown.
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

// MHD_get_connection_info is variadic and answers a union holding a sockaddr: the client's address as
// text (IPv4 or IPv6) in `buffer`, for the per-client request budget. Returns 0, or -1 when unknown.
static inline int cmhd_client_address(struct MHD_Connection *connection, char *buffer, socklen_t size) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return -1;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        return inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, size) ? 0 : -1;
    }
    if (address->sa_family == AF_INET6) {
        return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, size) ? 0 : -1;
    }
    return -1;
}
#endif
