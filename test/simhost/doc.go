// Package simhost serves simulated Kafka broker hosts over real SSH
// (golang.org/x/crypto/ssh server side) on 127.0.0.1. Each host answers the
// gather script with canned command output in the script's own section
// format, and can be told to misbehave (hang, refuse, lie, drop) so the
// scanner's fault handling is tested without root or a network. The demo
// fleet and the fan-out tests and benchmarks use it.
package simhost
