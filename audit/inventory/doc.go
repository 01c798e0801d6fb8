// Package inventory loads the list of Kafka broker hosts kaudit audits and
// how to reach each one.
//
// kaudit's own YAML format has four top-level keys:
//
//	defaults:   host settings applied to every host
//	profile:    threshold overrides for every host
//	groups:     NAME: {vars: settings, hosts: {HOST: settings}, children: [GROUP...]}
//	hosts:      HOST: settings            (hosts in no group)
//
// where settings are address, port, user, identity_files, use_agent,
// known_hosts, host_key_policy, proxy_jump, become, connect_timeout,
// timeout, connection, kafka {port, config, home}, interfaces, profile,
// and assume_kernel / assume_kafka (the upgrade planned for the host, used
// by the pre-upgrade what-if; "" cancels an inherited value).
// Precedence is defaults < group vars (parent before child, then by name)
// < host. Each host is defined once; put it in several groups with
// children:.
//
// Ansible inventories are read as they are, in three forms (detected: see
// detectFormat): YAML, INI (ini.go) and the JSON of ansible-inventory --list
// (list.go, also from standard input, path "-"). For YAML and INI the
// group_vars/ and host_vars/ directories beside the inventory are read too
// (varsdir.go), in Ansible's precedence. An Ansible YAML inventory is read:
// all/children/hosts/vars, nested groups, host ranges (broker[01:03]),
// host:port keys, hosts listed in several groups (variables merged by group
// depth, ansible_group_priority, then name, host variables last, as Ansible
// does). The connection variables ansible_host, ansible_port, ansible_user,
// ansible_ssh_private_key_file, ansible_become(_method) and
// ansible_connection are honoured, kaudit_* variables carry kaudit
// settings (kaudit_assume_kernel and kaudit_assume_kafka among them), and
// all other variables are ignored.
//
// Validation is strict and complete: Parse reports every problem of a file
// at once, each an *Error naming the file, line and field, with a hint.
// Values that reach ssh or a remote shell (host names, addresses, users,
// proxy_jump, interface names, Kafka paths) must match allow-lists; values
// that do not are rejected, never escaped, so callers may pass them on as
// they are (still as separate arguments, not through a local shell).
//
// Loading touches the local file system only to expand "~" and to check
// that identity files are readable. It never dials a host. An empty
// Host.User means "the user running kaudit", resolved by the caller.
package inventory
