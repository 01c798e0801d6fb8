// Package fanout runs one function over many items with a bound: at most
// Limit at once, optionally a canary that runs alone first, optionally in
// batches that each wait for the previous one, and stopping (starting
// nothing more) after too many failures or when the context ends. The
// scan, apply and rollback of a fleet all fan out through it.
package fanout
