// Package sandbox is a stateful, in-memory implementation of the billing and
// payments service that speaks its exact wire format (SPEC.md): envelopes,
// status and response codes, validation, authentication schemes and scopes,
// the IP allowlist, cursor pagination and the state machines.
//
// It is the machinery behind the public billingtest package and the
// standalone server of examples/sandbox. It never imports the SDK, so a bug in
// one cannot hide the same bug in the other.
//
// # Adding a resource group
//
// A resource group is one file holding its records, its state type and a
// function returning its routes, e.g.
//
//	func productRoutes(s *Server) []route {
//		return []route{
//			{pattern: "POST /v1/products", auth: authBilling, scope: ScopeProductsWrite, handler: s.createProduct},
//		}
//	}
//
// plus one line in routeGroups (routes.go) and one field in Server for its
// state. Handlers decode bodies with decodeFields and its typed getters
// (validate.go), keep records in a table (store.go), list them with
// parsePageQuery and listPage (pagination.go), and answer through the writers
// of respond.go. Time-driven work (resolutions, callbacks, renewals, expiries)
// goes through s.schedule and reads the time from s.Now.
//
// # Two wires
//
// Config.Wire chooses the form of the money movements' answers, callbacks and
// webhooks: the spec's, or the payments provider's documented payloads. The
// state behind them is one; handlers never ask which wire is in force, they
// call the shape's function in s.shapes (wire.go), whose two rows, specShapes
// and providerShapes (wire_provider.go), render it. A new shape that differs
// between the wires is one field there and one function per row.
//
// Every answer carries an X-Request-Id header, also written to the request log.
package sandbox
