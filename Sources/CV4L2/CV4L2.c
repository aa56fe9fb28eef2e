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
