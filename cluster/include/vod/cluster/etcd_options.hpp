// SPDX-License-Identifier: LGPL-2.1-or-later
// The --etcd-* options, defined once for every tool that reaches a fleet's etcd (vod-server,
// vod-client; their config files take the same names). After parsing, the tool hands them to
// cluster::set_etcd_security (etcd_url.hpp) before it parses an etcd URL.
#pragma once

#include <boost/program_options.hpp>

#include "vod/cluster/etcd_url.hpp"

namespace vod::cluster {

inline void add_etcd_options(boost::program_options::options_description& d, EtcdSecurity& s) {
  namespace po = boost::program_options;
  d.add_options()("etcd-cacert", po::value(&s.cacert),
                  "with etcds://: the CA certificate (PEM) etcd's certificate must verify against (default: the system's CAs)")(
      "etcd-cert", po::value(&s.cert), "with etcds://: a client certificate (PEM) for an etcd run with --client-cert-auth")(
      "etcd-key", po::value(&s.key), "the private key (PEM) of --etcd-cert")(
      "etcd-user", po::value(&s.user), "etcd's authentication: the user whose role may read and write the fleet's prefix")(
      "etcd-password-file", po::value(&s.password_file),
      "a file holding --etcd-user's password (read at each authentication; never on the command line)");
}

}  // namespace vod::cluster
