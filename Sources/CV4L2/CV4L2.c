#include "CV4L2.h"
#include <string.h>
#include <sys/ioctl.h>

int cv4l2_ioctl(int fd, unsigned long request, void *argument) { return ioctl(fd, request, argument); }

unsigned long cv4l2_vidioc_querycap(void) { return VIDIOC_QUERYCAP; }
unsigned long cv4l2_vidioc_enum_fmt(void) { return VIDIOC_ENUM_FMT; }
unsigned long cv4l2_vidioc_enum_framesizes(void) { return VIDIOC_ENUM_FRAMESIZES; }
unsigned long cv4l2_vidioc_enum_frameintervals(void) { return VIDIOC_ENUM_FRAMEINTERVALS; }
unsigned long cv4l2_vidioc_g_fmt(void) { return VIDIOC_G_FMT; }
unsigned long cv4l2_vidioc_s_fmt(void) { return VIDIOC_S_FMT; }
unsigned long cv4l2_vidioc_g_parm(void) { return VIDIOC_G_PARM; }
unsigned long cv4l2_vidioc_s_parm(void) { return VIDIOC_S_PARM; }
unsigned long cv4l2_vidioc_reqbufs(void) { return VIDIOC_REQBUFS; }
unsigned long cv4l2_vidioc_querybuf(void) { return VIDIOC_QUERYBUF; }
unsigned long cv4l2_vidioc_qbuf(void) { return VIDIOC_QBUF; }
unsigned long cv4l2_vidioc_dqbuf(void) { return VIDIOC_DQBUF; }
unsigned long cv4l2_vidioc_streamon(void) { return VIDIOC_STREAMON; }
unsigned long cv4l2_vidioc_streamoff(void) { return VIDIOC_STREAMOFF; }
unsigned long cv4l2_vidioc_query_ext_ctrl(void) { return VIDIOC_QUERY_EXT_CTRL; }

uint32_t cv4l2_pix_fmt_mjpeg(void) { return V4L2_PIX_FMT_MJPEG; }
uint32_t cv4l2_pix_fmt_jpeg(void) { return V4L2_PIX_FMT_JPEG; }
uint32_t cv4l2_pix_fmt_yuyv(void) { return V4L2_PIX_FMT_YUYV; }
uint32_t cv4l2_pix_fmt_uyvy(void) { return V4L2_PIX_FMT_UYVY; }
uint32_t cv4l2_pix_fmt_nv12(void) { return V4L2_PIX_FMT_NV12; }
uint32_t cv4l2_pix_fmt_yuv420(void) { return V4L2_PIX_FMT_YUV420; }
uint32_t cv4l2_pix_fmt_rgb24(void) { return V4L2_PIX_FMT_RGB24; }
uint32_t cv4l2_pix_fmt_bgr24(void) { return V4L2_PIX_FMT_BGR24; }
uint32_t cv4l2_pix_fmt_abgr32(void) { return V4L2_PIX_FMT_ABGR32; }
uint32_t cv4l2_pix_fmt_xbgr32(void) { return V4L2_PIX_FMT_XBGR32; }
uint32_t cv4l2_pix_fmt_rgba32(void) { return V4L2_PIX_FMT_RGBA32; }
uint32_t cv4l2_pix_fmt_rgbx32(void) { return V4L2_PIX_FMT_RGBX32; }

int cv4l2_query_menu(int fd, uint32_t id, uint32_t index, char *name, int64_t *value) {
    struct v4l2_querymenu item;
    memset(&item, 0, sizeof item);
    item.id = id;
    item.index = index;
    int result = ioctl(fd, VIDIOC_QUERYMENU, &item);
    if (result == 0) {
        if (name) { memcpy(name, item.name, sizeof item.name); name[sizeof item.name - 1] = 0; }
        if (value) *value = item.value;
    }
    return result;
}

int cv4l2_get_control(int fd, uint32_t id, int is64, int64_t *value) {
    struct v4l2_ext_control control;
    struct v4l2_ext_controls controls;
    memset(&control, 0, sizeof control);
    memset(&controls, 0, sizeof controls);
    control.id = id;
    controls.which = V4L2_CTRL_WHICH_CUR_VAL;
    controls.count = 1;
    controls.controls = &control;
    int result = ioctl(fd, VIDIOC_G_EXT_CTRLS, &controls);
    if (result == 0) *value = is64 ? control.value64 : control.value;
    return result;
}

int cv4l2_set_control(int fd, uint32_t id, int is64, int64_t value) {
    struct v4l2_ext_control control;
    struct v4l2_ext_controls controls;
    memset(&control, 0, sizeof control);
    memset(&controls, 0, sizeof controls);
    control.id = id;
    if (is64) control.value64 = value; else control.value = (int32_t)value;
    controls.which = V4L2_CTRL_WHICH_CUR_VAL;
    controls.count = 1;
    controls.controls = &control;
    return ioctl(fd, VIDIOC_S_EXT_CTRLS, &controls);
}

#ifndef V4L2_CTRL_TYPE_RECT
#define V4L2_CTRL_TYPE_RECT 0x0107
#endif
#ifndef V4L2_CTRL_WHICH_MIN_VAL
#define V4L2_CTRL_WHICH_MIN_VAL 0x0f020000
#endif
#ifndef V4L2_CTRL_WHICH_MAX_VAL
#define V4L2_CTRL_WHICH_MAX_VAL 0x0f030000
#endif
#ifndef V4L2_CID_USER_UVC_BASE
#define V4L2_CID_USER_UVC_BASE (V4L2_CID_USER_BASE + 0x11e0)
#endif
#ifndef V4L2_CID_UVC_REGION_OF_INTEREST_RECT
#define V4L2_CID_UVC_REGION_OF_INTEREST_RECT (V4L2_CID_USER_UVC_BASE + 1)
#define V4L2_CID_UVC_REGION_OF_INTEREST_AUTO (V4L2_CID_USER_UVC_BASE + 2)
#define V4L2_UVC_REGION_OF_INTEREST_AUTO_EXPOSURE (1 << 0)
#define V4L2_UVC_REGION_OF_INTEREST_AUTO_FOCUS (1 << 3)
#endif

uint32_t cv4l2_cid_focus_auto(void) { return V4L2_CID_FOCUS_AUTO; }
uint32_t cv4l2_cid_auto_focus_start(void) { return V4L2_CID_AUTO_FOCUS_START; }
uint32_t cv4l2_cid_exposure_auto(void) { return V4L2_CID_EXPOSURE_AUTO; }
uint32_t cv4l2_cid_roi_rect(void) { return V4L2_CID_UVC_REGION_OF_INTEREST_RECT; }
uint32_t cv4l2_cid_roi_auto(void) { return V4L2_CID_UVC_REGION_OF_INTEREST_AUTO; }
uint32_t cv4l2_roi_auto_exposure(void) { return V4L2_UVC_REGION_OF_INTEREST_AUTO_EXPOSURE; }
uint32_t cv4l2_roi_auto_focus(void) { return V4L2_UVC_REGION_OF_INTEREST_AUTO_FOCUS; }
uint32_t cv4l2_ctrl_type_rect(void) { return V4L2_CTRL_TYPE_RECT; }

int cv4l2_get_rect_control(int fd, uint32_t id, int which, int32_t *left, int32_t *top, uint32_t *width, uint32_t *height) {
    struct v4l2_rect rect;
    struct v4l2_ext_control control;
    struct v4l2_ext_controls controls;
    memset(&rect, 0, sizeof rect);
    memset(&control, 0, sizeof control);
    memset(&controls, 0, sizeof controls);
    control.id = id;
    control.size = sizeof rect;
    control.ptr = &rect;
    controls.which = which == 1 ? V4L2_CTRL_WHICH_MIN_VAL : which == 2 ? V4L2_CTRL_WHICH_MAX_VAL : V4L2_CTRL_WHICH_CUR_VAL;
    controls.count = 1;
    controls.controls = &control;
    int result = ioctl(fd, VIDIOC_G_EXT_CTRLS, &controls);
    if (result == 0) {
        *left = rect.left;
        *top = rect.top;
        *width = rect.width;
        *height = rect.height;
    }
    return result;
}

int cv4l2_set_rect_control(int fd, uint32_t id, int32_t left, int32_t top, uint32_t width, uint32_t height) {
    struct v4l2_rect rect = { .left = left, .top = top, .width = width, .height = height };
    struct v4l2_ext_control control;
    struct v4l2_ext_controls controls;
    memset(&control, 0, sizeof control);
    memset(&controls, 0, sizeof controls);
    control.id = id;
    control.size = sizeof rect;
    control.ptr = &rect;
    controls.which = V4L2_CTRL_WHICH_CUR_VAL;
    controls.count = 1;
    controls.controls = &control;
    return ioctl(fd, VIDIOC_S_EXT_CTRLS, &controls);
}
