// SPDX-License-Identifier: LGPL-2.1-or-later
#include "session_opener.hpp"

#include "vod/client/fleet.hpp"
#include "vod/client/reconnect.hpp"
#include "vod/log.hpp"

namespace vod::proxy {

namespace asio = boost::asio;

SessionOpener::SessionOpener(asio::io_context& io, unsigned threads) : io_(io), workers_(threads) {}

SessionOpener::~SessionOpener() {
  stopping_ = true;
  stop_.raise();
  workers_.stop();  // what has not started never will
  workers_.join();
}

void SessionOpener::open(client::Uri uri, client::SessionOptions options, std::optional<client::ReconnectPolicy> retry, Done done) {
  asio::post(workers_, [this, uri = std::move(uri), options = std::move(options), retry, done = std::move(done)]() mutable {
    std::unique_ptr<client::Session> session;
    std::string error;
    unsigned attempts = 0;
    // Without a policy, one attempt (0 s of retrying); with one, its schedule with the first
    // attempt at once: the sessions' one retry loop (client::retry_on_schedule).
    client::ReconnectPolicy once;
    once.give_up_after = std::chrono::milliseconds(0);
    try {
      const client::RetryResult r = client::retry_on_schedule(
          retry ? *retry : once, true, stop_,
          [&] {
            ++attempts;
            session = std::make_unique<client::Session>(uri, options);
            session->catalog();  // described before it is handed over: the event loop never waits for it
          },
          [&] { session.reset(); });
      if (!r.succeeded) error = r.last_failure;
    } catch (const client::Interrupted&) {
      session.reset();
      error = "the proxy is stopping";
    } catch (const std::exception& e) {
      session.reset();
      error = e.what();
    }
    asio::post(io_, [done = std::move(done), session = std::move(session), error, attempts]() mutable {
      done(std::move(session), error, attempts);
    });
  });
}

void SessionOpener::open_live(client::Uri uri, client::LiveOptions rdma, std::optional<client::MulticastLiveOptions> multicast,
                              LiveDone done) {
  asio::post(workers_,
             [this, uri = std::move(uri), rdma = std::move(rdma), multicast = std::move(multicast), done = std::move(done)]() mutable {
               std::unique_ptr<client::LiveSource> source;
               std::string error;
               try {
                 if (!stopping_) source = client::open_live(uri, rdma, multicast);
                 else error = "the proxy is stopping";
               } catch (const std::exception& e) {
                 error = e.what();
               }
               asio::post(io_, [done = std::move(done), source = std::move(source), error]() mutable { done(std::move(source), error); });
             });
}

void SessionOpener::read_catalog(client::Uri uri, client::SessionOptions options, CatalogDone done) {
  asio::post(workers_, [this, uri = std::move(uri), options = std::move(options), done = std::move(done)]() mutable {
    std::shared_ptr<const proto::Catalog> catalog;
    std::string error;
    client::Stats stats;
    try {
      if (stopping_) throw std::runtime_error("the proxy is stopping");
      if (uri.cluster) {
        std::vector<std::string> left_out;
        catalog = std::make_shared<const proto::Catalog>(client::read_fleet_catalog(uri, options, &left_out));
        for (const auto& m : left_out) log::warn("proxy", "the fleet's catalog leaves out a member that did not answer: " + m);
      } else {
        client::Session session(uri, options);
        catalog = std::make_shared<const proto::Catalog>(session.catalog());
        stats = session.stats();
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    asio::post(io_,
               [done = std::move(done), catalog = std::move(catalog), error, stats]() mutable { done(std::move(catalog), error, stats); });
  });
}

}  // namespace vod::proxy
