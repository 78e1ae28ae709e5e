// Package earshot is the root of the earshot module: a listening service
// that tracks phrases on reddit, x and facebook, stores the posts that
// contain them as matches, scores every match and sends strong ones out as
// signed webhooks and email alerts. It is also a Go library for teams that
// embed those rules in their own services.
//
// The module is layered, and a test in this package enforces the
// dependency rule between the layers:
//
//   - core: the domain rules (platforms, phrases, matching, scoring, plan
//     limits, keys, webhook signing, errors), standard library only, no I/O.
//   - ports: the interfaces the application needs from the outside world
//     (stores by role, the event bus, the mailer, the clock, ...); it
//     imports only core.
//   - app: the use cases, which orchestrate core and ports and import
//     nothing else.
//   - server: the composition root, the one place that picks adapters
//     from the settings and binds them to app with fx.
//   - adapters: implementations of ports (gorm stores, watermill bus,
//     mailers, the reddit source, ...) and the transports that drive app;
//     an adapter never imports another adapter.
//   - cmd/earshot: the binary (serve, mock, migrate, admin).
//   - testkit: contract suites, fakes and fixtures that prove an adapter,
//     importable by anyone who writes one.
//
// This package itself holds no code.
package earshot
