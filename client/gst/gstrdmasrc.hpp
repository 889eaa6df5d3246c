// rdmasrc: a GstBaseSrc that makes a movie on a vod-server look like a local file. It answers
// random-access reads (pull mode, for qtdemux/matroskademux/tsdemux) and sequential ones (push
// mode) from one-sided RDMA Reads with read-ahead, and handles rdma:// URIs for playbin.
#pragma once

#include <gst/base/gstbasesrc.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_RDMA_SRC (gst_rdma_src_get_type())
G_DECLARE_FINAL_TYPE(GstRdmaSrc, gst_rdma_src, GST, RDMA_SRC, GstBaseSrc)

G_END_DECLS
