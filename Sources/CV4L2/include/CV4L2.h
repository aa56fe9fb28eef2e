// V4L2 (linux/videodev2.h) for Swift. Every symbol is prefixed `cv4l2_`.
//
// Why this exists: the ioctl request numbers (VIDIOC_*) are built by the function-like macros
// _IOR/_IOW/_IOWR and the pixel formats (V4L2_PIX_FMT_*) by v4l2_fourcc(); Swift imports neither, so
// they are re-exported here as functions. ioctl(2) itself is variadic, which Swift cannot call, and two
// structures are packed with anonymous unions (v4l2_querymenu, v4l2_ext_control) that Swift imports
// poorly; small helpers cover those. Plain integer #defines (V4L2_CAP_*, V4L2_CTRL_FLAG_*) and the enums
// import directly. Swift callers wrap every call in StudioSystem's EINTR-retrying `syscall`.
#ifndef STUDIO_CV4L2_H
#define STUDIO_CV4L2_H
#include <stdint.h>
#include <linux/videodev2.h>

// ioctl(fd, request, arg): returns -1 and sets errno on failure.
int cv4l2_ioctl(int fd, unsigned long request, void *argument);

unsigned long cv4l2_vidioc_querycap(void);
unsigned long cv4l2_vidioc_enum_fmt(void);
unsigned long cv4l2_vidioc_enum_framesizes(void);
unsigned long cv4l2_vidioc_enum_frameintervals(void);
unsigned long cv4l2_vidioc_g_fmt(void);
unsigned long cv4l2_vidioc_s_fmt(void);
unsigned long cv4l2_vidioc_g_parm(void);
unsigned long cv4l2_vidioc_s_parm(void);
unsigned long cv4l2_vidioc_reqbufs(void);
unsigned long cv4l2_vidioc_querybuf(void);
unsigned long cv4l2_vidioc_qbuf(void);
unsigned long cv4l2_vidioc_dqbuf(void);
unsigned long cv4l2_vidioc_streamon(void);
unsigned long cv4l2_vidioc_streamoff(void);
unsigned long cv4l2_vidioc_query_ext_ctrl(void);

// Pixel formats (fourcc codes).
uint32_t cv4l2_pix_fmt_mjpeg(void);
uint32_t cv4l2_pix_fmt_jpeg(void);
uint32_t cv4l2_pix_fmt_yuyv(void);
uint32_t cv4l2_pix_fmt_uyvy(void);
uint32_t cv4l2_pix_fmt_nv12(void);
uint32_t cv4l2_pix_fmt_yuv420(void);
uint32_t cv4l2_pix_fmt_rgb24(void);
uint32_t cv4l2_pix_fmt_bgr24(void);
uint32_t cv4l2_pix_fmt_abgr32(void);
uint32_t cv4l2_pix_fmt_xbgr32(void);
uint32_t cv4l2_pix_fmt_rgba32(void);
uint32_t cv4l2_pix_fmt_rgbx32(void);

// VIDIOC_QUERYMENU: v4l2_querymenu is packed around an anonymous union of a name and a value.
// Fills `name` (at least 32 bytes, NUL-terminated) or `value` for menu item `index` of control `id`.
int cv4l2_query_menu(int fd, uint32_t id, uint32_t index, char *name, int64_t *value);

// VIDIOC_G_EXT_CTRLS / VIDIOC_S_EXT_CTRLS for one integer-like control (v4l2_ext_control is packed with
// an anonymous union; `value64` covers INTEGER64, `value` the 32-bit types).
int cv4l2_get_control(int fd, uint32_t id, int is64, int64_t *value);
int cv4l2_set_control(int fd, uint32_t id, int is64, int64_t value);

// Control ids built from class bases (`V4L2_CID_CAMERA_CLASS_BASE+12`), which Swift does not import.
uint32_t cv4l2_cid_focus_auto(void);
uint32_t cv4l2_cid_auto_focus_start(void);
uint32_t cv4l2_cid_exposure_auto(void);
// The UVC 1.5 region of interest (linux/uvcvideo.h since Linux 6.16; defined here when the installed
// headers are older): a rectangle control in the sensor's pixels and a bitmask of what follows it.
uint32_t cv4l2_cid_roi_rect(void);
uint32_t cv4l2_cid_roi_auto(void);
uint32_t cv4l2_roi_auto_exposure(void);
uint32_t cv4l2_roi_auto_focus(void);
uint32_t cv4l2_ctrl_type_rect(void);

// A rectangle control (V4L2_CTRL_TYPE_RECT, through the ext-control's pointer): `which` 0 reads the
// current value, 1 the smallest rectangle, 2 the largest (V4L2_CTRL_WHICH_MIN_VAL / MAX_VAL).
int cv4l2_get_rect_control(int fd, uint32_t id, int which, int32_t *left, int32_t *top, uint32_t *width, uint32_t *height);
int cv4l2_set_rect_control(int fd, uint32_t id, int32_t left, int32_t top, uint32_t width, uint32_t height);

#endif
