// SPDX-License-Identifier: LGPL-2.1-or-later
// The "rdma" GStreamer plugin: rdmasrc.
#include <gst/gst.h>

#include "gstrdmasrc.hpp"

#ifndef PACKAGE
#define PACKAGE "rdma-vod"
#endif

static gboolean plugin_init(GstPlugin* plugin) { return gst_element_register(plugin, "rdmasrc", GST_RANK_PRIMARY, GST_TYPE_RDMA_SRC); }

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, rdma, "Video on demand over one-sided RDMA Read (rdma-vod)", plugin_init,
                  VOD_VERSION, "LGPL", "rdma-vod", "Unknown package origin")  // no published home yet: GStreamer's own placeholder
