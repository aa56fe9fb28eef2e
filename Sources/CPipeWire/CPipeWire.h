// libpipewire-0.3 (0.3.65) and the SPA headers that come with it, plus static inline helpers for what
// Swift cannot call: PipeWire's interface methods are function-like macros (spa_interface_call), and the
// SPA POD builder and parser are variadic macros. Every helper is prefixed `cpw_`.
#ifndef STUDIO_CPIPEWIRE_H
#define STUDIO_CPIPEWIRE_H

#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/audio/format-utils.h>
#include <spa/param/buffers.h>
#include <spa/buffer/meta.h>
#include <spa/param/port-config.h>
#include <spa/pod/builder.h>
#include <spa/pod/iter.h>
#include <spa/utils/result.h>
#include <spa/utils/json.h>
#include <stdio.h>
#include <string.h>

// pw_init, then stderr put back to unbuffered. pw_init's logger calls setlinebuf(stderr); on a stream
// that was already used unbuffered, glibc keeps its one-byte buffer and only marks it line-buffered,
// so every later fwrite to stderr goes out as two write(2) calls: its first byte, then the rest. A
// reader that takes each read as text then sees half a UTF-8 character: `swift test` drops such
// chunks, which lost swift-testing's closing lines (they start with a 3-byte symbol) after any
// PipeWire test. Unbuffered, each fwrite is one write(2) again.
static inline void cpw_init(void) {
    pw_init(NULL, NULL);
    setvbuf(stderr, NULL, _IONBF, 0);
}

// spa_strerror is a macro.
static inline const char *cpw_strerror(int result) {
    return spa_strerror(result);
}

// pw_core_add_listener is a macro over spa_interface_call.
static inline int cpw_core_add_listener(struct pw_core *core, struct spa_hook *hook,
                                        const struct pw_core_events *events, void *data) {
    return pw_core_add_listener(core, hook, events, data);
}

// pw_core_sync is a macro; the answer comes back as the core's `done` event with the same seq.
static inline int cpw_core_sync(struct pw_core *core, int seq) {
    return pw_core_sync(core, PW_ID_CORE, seq);
}

// pw_core_get_registry is a macro-built interface call (with the version macro).
static inline struct pw_registry *cpw_core_get_registry(struct pw_core *core) {
    return pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
}

// pw_registry_add_listener is a macro.
static inline int cpw_registry_add_listener(struct pw_registry *registry, struct spa_hook *hook,
                                            const struct pw_registry_events *events, void *data) {
    return pw_registry_add_listener(registry, hook, events, data);
}

// pw_registry_bind is a macro; binds a Node global to read its params (offered formats).
static inline struct pw_node *cpw_registry_bind_node(struct pw_registry *registry, uint32_t id) {
    return (struct pw_node *)pw_registry_bind(registry, id, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
}

// pw_node_add_listener is a macro.
static inline int cpw_node_add_listener(struct pw_node *node, struct spa_hook *hook,
                                        const struct pw_node_events *events, void *data) {
    return pw_node_add_listener(node, hook, events, data);
}

// pw_node_enum_params is a macro; asks for every EnumFormat param (answers arrive as `param` events,
// followed by the core's `done` for a later sync).
static inline int cpw_node_enum_formats(struct pw_node *node, int seq) {
    return pw_node_enum_params(node, seq, SPA_PARAM_EnumFormat, 0, UINT32_MAX, NULL);
}

// pw_core_create_object with a literal factory name and the Link type/version macros: asks the
// daemon's link-factory for a link between two ports. `object.linger = false` makes the link die with
// this client (a crashed server leaves no stale links behind).
static inline struct pw_proxy *cpw_core_create_link(struct pw_core *core, uint32_t output_node, uint32_t output_port,
                                                    uint32_t input_node, uint32_t input_port) {
    struct pw_properties *props = pw_properties_new(PW_KEY_OBJECT_LINGER, "false", NULL);
    pw_properties_setf(props, PW_KEY_LINK_OUTPUT_NODE, "%u", output_node);
    pw_properties_setf(props, PW_KEY_LINK_OUTPUT_PORT, "%u", output_port);
    pw_properties_setf(props, PW_KEY_LINK_INPUT_NODE, "%u", input_node);
    pw_properties_setf(props, PW_KEY_LINK_INPUT_PORT, "%u", input_port);
    struct pw_proxy *proxy = (struct pw_proxy *)pw_core_create_object(core, "link-factory", PW_TYPE_INTERFACE_Link,
                                                                     PW_VERSION_LINK, &props->dict, 0);
    pw_properties_free(props);
    return proxy;
}

// pw_registry_bind is a macro; binds the "default" Metadata global, where a session manager keeps
// default.audio.source (the microphone follows it).
static inline struct pw_metadata *cpw_registry_bind_metadata(struct pw_registry *registry, uint32_t id) {
    return (struct pw_metadata *)pw_registry_bind(registry, id, PW_TYPE_INTERFACE_Metadata, PW_VERSION_METADATA, 0);
}

// pw_metadata_add_listener is a macro; every current property arrives as a `property` event, then changes.
static inline int cpw_metadata_add_listener(struct pw_metadata *metadata, struct spa_hook *hook,
                                            const struct pw_metadata_events *events, void *data) {
    return pw_metadata_add_listener(metadata, hook, events, data);
}

// Metadata values are SPA JSON (default.audio.source is `{ "name": "<node.name>" }`). The spa_json
// walk is a loop over out-parameters and a key buffer; one helper: the string value of `key` in the
// JSON object `json`, copied into `out` (NUL-terminated). Returns its length, or -1 when `json` is not
// an object or has no string `key`.
static inline int cpw_json_object_string(const char *json, const char *key, char *out, int size) {
    struct spa_json iter, object;
    char name[256];
    const char *value;
    spa_json_init(&iter, json, strlen(json));
    if (spa_json_enter_object(&iter, &object) <= 0)
        return -1;
    while (spa_json_get_string(&object, name, sizeof name) > 0) {
        if (strcmp(name, key) == 0) {
            if (spa_json_get_string(&object, out, size) <= 0)
                return -1;
            return (int)strlen(out);
        }
        if (spa_json_next(&object, &value) <= 0)
            return -1;
    }
    return -1;
}

// pw_properties_new is variadic: a property list with one key/value (more through pw_properties_set).
static inline struct pw_properties *cpw_properties_new(const char *key, const char *value) {
    return pw_properties_new(key, value, NULL);
}

// pw_loop_add_timer / pw_loop_update_timer are macros over the loop's utils interface.
static inline struct spa_source *cpw_loop_add_timer(struct pw_loop *loop, spa_source_timer_func_t func, void *data) {
    return pw_loop_add_timer(loop, func, data);
}

// Arms `timer` to fire after `first_ns` and then every `interval_ns` (0: once).
static inline int cpw_loop_update_timer(struct pw_loop *loop, struct spa_source *timer, uint64_t first_ns, uint64_t interval_ns) {
    struct timespec value = { (time_t)(first_ns / SPA_NSEC_PER_SEC), (long)(first_ns % SPA_NSEC_PER_SEC) };
    struct timespec interval = { (time_t)(interval_ns / SPA_NSEC_PER_SEC), (long)(interval_ns % SPA_NSEC_PER_SEC) };
    return pw_loop_update_timer(loop, timer, &value, &interval, false);
}

// pw_loop_destroy_source is a macro.
static inline void cpw_loop_destroy_source(struct pw_loop *loop, struct spa_source *source) {
    pw_loop_destroy_source(loop, source);
}

// SPA_POD_BUILDER_INIT is a macro; builds into `buffer`.
static inline struct spa_pod_builder cpw_pod_builder(void *buffer, uint32_t size) {
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, size);
    return builder;
}

// A fixed raw video format (one pixel format, size and rate): what a producer offers, or what a camera
// stream asks for once it has chosen among the source's offers. spa_video_info_raw's designated
// initialisers and SPA_RECTANGLE/SPA_FRACTION are macros.
static inline const struct spa_pod *cpw_build_video_format(struct spa_pod_builder *builder, uint32_t param_id,
                                                           uint32_t format, uint32_t width, uint32_t height,
                                                           uint32_t rate_num, uint32_t rate_denom) {
    struct spa_video_info_raw info;
    memset(&info, 0, sizeof info);
    info.format = (enum spa_video_format)format;
    info.size = SPA_RECTANGLE(width, height);
    info.framerate = SPA_FRACTION(rate_num, rate_denom);
    return spa_format_video_raw_build(builder, param_id, &info);
}

// An MJPEG video format (size, rate) for a camera whose node offers no raw format that fits, or for
// pw-virtual-camera --format mjpeg. spa_format_video_mjpg_build takes a struct the shim fills, like the
// raw one above (one place for the builder calls).
static inline const struct spa_pod *cpw_build_mjpg_format(struct spa_pod_builder *builder, uint32_t param_id,
                                                          uint32_t width, uint32_t height,
                                                          uint32_t rate_num, uint32_t rate_denom) {
    struct spa_video_info_mjpg info;
    memset(&info, 0, sizeof info);
    info.size = SPA_RECTANGLE(width, height);
    info.framerate = SPA_FRACTION(rate_num, rate_denom);
    return spa_format_video_mjpg_build(builder, param_id, &info);
}

// Interleaved 32-bit float audio at `rate` with `channels` (FL FR for two, MONO for one). The stream's
// own converter (the adapter's audioconvert) resamples and remixes the source into this.
static inline const struct spa_pod *cpw_build_audio_format(struct spa_pod_builder *builder, uint32_t rate, uint32_t channels) {
    struct spa_audio_info_raw info;
    memset(&info, 0, sizeof info);
    info.format = SPA_AUDIO_FORMAT_F32;
    info.rate = rate;
    info.channels = channels;
    if (channels == 1) {
        info.position[0] = SPA_AUDIO_CHANNEL_MONO;
    } else if (channels >= 2) {
        info.position[0] = SPA_AUDIO_CHANNEL_FL;
        info.position[1] = SPA_AUDIO_CHANNEL_FR;
    }
    return spa_format_audio_raw_build(builder, SPA_PARAM_EnumFormat, &info);
}

// spa_pod_builder_add_object with SPA_POD_* is variadic: the Buffers param of a producer (count range,
// one data block of `size` bytes with row `stride`).
static inline const struct spa_pod *cpw_build_video_buffers(struct spa_pod_builder *builder, uint32_t size, uint32_t stride) {
    return (const struct spa_pod *)spa_pod_builder_add_object(builder,
        SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(4, 2, 16),
        SPA_PARAM_BUFFERS_blocks,  SPA_POD_Int(1),
        SPA_PARAM_BUFFERS_size,    SPA_POD_Int((int32_t)size),
        SPA_PARAM_BUFFERS_stride,  SPA_POD_Int((int32_t)stride));
}

// spa_pod_builder_add_object with SPA_POD_* is variadic: a Meta param asking for SPA_META_Header on every
// buffer (a producer offers it with its Buffers param; a consumer asks for it at connect). Both ends of a
// link must list it for the buffers to carry it; its `pts` is the producer's time for the frame.
static inline const struct spa_pod *cpw_build_meta_header(struct spa_pod_builder *builder) {
    return (const struct spa_pod *)spa_pod_builder_add_object(builder,
        SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
        SPA_PARAM_META_size, SPA_POD_Int((int32_t)sizeof(struct spa_meta_header)));
}

// The values of property `key` of an object pod (a format), for reading what a source offers.
// SPA_POD_BODY / SPA_POD_CHOICE_* are macros. Returns the number of values copied into `values` (each
// `value_size` bytes: 4 for an Id, 8 for a Rectangle or Fraction), at most `max`; `choice` gets the
// choice type (SPA_CHOICE_None, Range: default,min,max, Step, Enum: default then alternatives).
// 0 when the pod has no such property or the values are not of `value_type`.
static inline uint32_t cpw_pod_property_values(const struct spa_pod *object, uint32_t key, uint32_t value_type,
                                               uint32_t value_size, void *values, uint32_t max, uint32_t *choice) {
    if (object == NULL || !spa_pod_is_object(object)) return 0;
    const struct spa_pod_prop *prop = spa_pod_find_prop(object, NULL, key);
    if (prop == NULL) return 0;
    uint32_t count = 0, kind = SPA_CHOICE_None;
    const struct spa_pod *value = spa_pod_get_values(&prop->value, &count, &kind);
    if (value->type != value_type || value->size != value_size) return 0;
    *choice = kind;
    uint32_t copied = count < max ? count : max;
    memcpy(values, SPA_POD_BODY_CONST(value), (size_t)copied * value_size);
    return copied;
}

// spa_pod_is_object for a param whose object type is the Format one (SPA_POD_OBJECT_TYPE is a macro).
static inline uint32_t cpw_pod_object_type(const struct spa_pod *pod) {
    return spa_pod_is_object(pod) ? SPA_POD_OBJECT_TYPE(pod) : 0;
}

// The property dictionary of a pw_properties (a field read behind a struct Swift sees as opaque in places).
static inline const char *cpw_dict_get(const struct spa_dict *dict, const char *key) {
    return dict ? spa_dict_lookup(dict, key) : NULL;
}

// spa_format_audio_raw_parse on an EnumFormat param (an audio node's offer): its channel count and
// positions (up to 64), 0 when the param is not raw audio.
static inline uint32_t cpw_parse_audio_channels(const struct spa_pod *param, uint32_t *positions, uint32_t max) {
    struct spa_audio_info_raw info;
    memset(&info, 0, sizeof info);
    uint32_t media_type = 0, media_subtype = 0;
    if (spa_format_parse(param, &media_type, &media_subtype) < 0) return 0;
    if (media_type != SPA_MEDIA_TYPE_audio || media_subtype != SPA_MEDIA_SUBTYPE_raw) return 0;
    if (spa_format_audio_raw_parse(param, &info) < 0) return 0;
    uint32_t count = info.channels < max ? info.channels : max;
    if (count > SPA_AUDIO_MAX_CHANNELS) count = SPA_AUDIO_MAX_CHANNELS;
    for (uint32_t i = 0; i < count; i++) positions[i] = info.position[i];
    return info.channels;
}

// What a session manager does to a stream's adapter before linking it: a PortConfig param putting its
// output side in DSP mode (one F32P port per channel, at `positions`). A stream-published
// Audio/Source has no ports at all until then. spa_pod_builder_add_object is variadic.
static inline const struct spa_pod *cpw_build_dsp_port_config(struct spa_pod_builder *builder, uint32_t rate,
                                                               uint32_t channels, const uint32_t *positions) {
    struct spa_audio_info_raw info;
    memset(&info, 0, sizeof info);
    info.format = SPA_AUDIO_FORMAT_F32P;
    info.rate = rate;
    info.channels = channels < SPA_AUDIO_MAX_CHANNELS ? channels : SPA_AUDIO_MAX_CHANNELS;
    for (uint32_t i = 0; i < info.channels; i++) info.position[i] = positions[i];
    struct spa_pod_frame frame;
    spa_pod_builder_push_object(builder, &frame, SPA_TYPE_OBJECT_ParamPortConfig, SPA_PARAM_PortConfig);
    spa_pod_builder_add(builder,
        SPA_PARAM_PORT_CONFIG_direction, SPA_POD_Id(SPA_DIRECTION_OUTPUT),
        SPA_PARAM_PORT_CONFIG_mode, SPA_POD_Id(SPA_PARAM_PORT_CONFIG_MODE_dsp),
        SPA_PARAM_PORT_CONFIG_monitor, SPA_POD_Bool(false),
        SPA_PARAM_PORT_CONFIG_control, SPA_POD_Bool(false),
        0);
    spa_pod_builder_prop(builder, SPA_PARAM_PORT_CONFIG_format, 0);
    spa_format_audio_raw_build(builder, SPA_PARAM_Format, &info);
    return (const struct spa_pod *)spa_pod_builder_pop(builder, &frame);
}

// pw_node_set_param is a macro.
static inline int cpw_node_set_param(struct pw_node *node, uint32_t id, const struct spa_pod *param) {
    return pw_node_set_param(node, id, 0, param);
}

#endif
