// Package audit gathers facts from a fleet: it fans out over the hosts of
// an inventory with a bounded pool and a deadline per host, runs the gather
// script once per host through the transport, and returns facts or a
// classified error for every host. It knows nothing of rules or reports.
package audit
