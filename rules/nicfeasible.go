package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// What a NIC lets an offload be: the one decision both the nic-offload
// rule (a feature the NIC cannot take is not a plain failure) and the fix
// plan (remediate lists it under "cannot apply") make.

// featState is what the kernel lets one offload (or a group of them, as
// the ethtool -K keyword covers) be.
type featState int

const (
	featOn      featState = iota // on (any bit of the group)
	featOff                      // off, changeable
	featRefused                  // off although on was requested ("off [requested on]"): the kernel drops it
	featFixed                    // off [fixed]: the driver does not offer it
	featUnknown                  // not reported
)

// offloadGroups are the ethtool -k children behind one keyword, as the
// gather keeps them (netlink-era ethtool annotates only the children of a
// group of several: "tx-checksumming: off" over "tx-checksum-ipv4: off
// [fixed]").
var offloadGroups = map[string][]string{
	"tx-checksumming": {"tx-checksum-ipv4", "tx-checksum-ip-generic", "tx-checksum-ipv6"},
	"scatter-gather":  {"tx-scatter-gather"},
	"tso":             {"tx-tcp-segmentation", "tx-tcp6-segmentation"},
}

// feature is the state of an ethtool keyword on nic, from its children
// when they were gathered, else from its own line; detail names the line
// that shows a refusal ("tx-checksum-ip-generic: off [requested on]").
func feature(nic *facts.NIC, name string) (st featState, detail string) {
	var lines []string
	for _, c := range offloadGroups[name] {
		if _, ok := nic.Features[c]; ok {
			lines = append(lines, c)
		}
	}
	if len(lines) == 0 {
		if _, ok := nic.Features[name]; !ok {
			return featUnknown, ""
		}
		lines = []string{name}
	}
	fixed, refused := 0, ""
	for _, l := range lines {
		f := nic.Features[l]
		switch {
		case f.On:
			return featOn, ""
		case f.Fixed:
			fixed++
		case f.Requested == "on" && refused == "":
			refused = l + ": off [requested on]"
		}
	}
	switch {
	case fixed == len(lines):
		return featFixed, ""
	case refused != "":
		return featRefused, refused
	}
	return featOff, ""
}

// offloadNeeds are the features the kernel drops an offload without
// (Linux 6.1 net/core/dev.c netdev_fix_features): TSO without
// scatter-gather ("Dropping TSO features since no SG feature") or without
// a transmit checksum offload ("... since no CSUM feature"), software GSO
// without scatter-gather ("Dropping NETIF_F_GSO since no SG feature").
// Scatter-gather itself does not depend on a checksum there; a driver may
// offer it only with one (virtio_net: both or neither).
var offloadNeeds = map[string][]string{
	"tso": {"scatter-gather", "tx-checksumming"},
	"gso": {"scatter-gather"},
}

// OffloadBlocked says why setting cannot be turned on on nic ("" when the
// facts show no obstacle) and what to do instead.
func OffloadBlocked(nic *facts.NIC, setting string) (reason, instead string) {
	drv := NICDriver(nic)
	self, selfDetail := feature(nic, setting)
	if self == featUnknown {
		self, selfDetail = featOff, ""
	}
	var fixed, refused, off []string
	for _, dep := range offloadNeeds[setting] {
		switch st, detail := feature(nic, dep); st {
		case featFixed:
			fixed = append(fixed, dep)
		case featRefused:
			refused = append(refused, dep+" ("+detail+")")
		case featOff:
			off = append(off, dep)
		}
	}
	vm := ""
	if strings.HasPrefix(drv, "virtio") || drv == "vmxnet3" || drv == "netvsc" || drv == "xen-netfront" {
		vm = " (a virtual NIC: give it checksum offload on the hypervisor's side, e.g. the virtio-net device's csum feature, then rerun kaudit)"
	}
	nothing := fmt.Sprintf("nothing to change on this host: the %s driver does not offer it%s; waive the finding here", drv, vm)
	needs := func(deps []string, how string) string {
		return fmt.Sprintf("it needs %s, %s", andList(deps), how)
	}
	switch {
	case self == featFixed && len(fixed) > 0:
		return fmt.Sprintf("%s cannot be turned on: it is off [fixed] by the %s driver, and %s", setting, drv, needs(fixed, pick(fixed, "which is", "which are")+" off [fixed] too")), nothing
	case self == featFixed:
		return fmt.Sprintf("%s cannot be turned on: it is off [fixed] by the %s driver", setting, drv), nothing
	case len(fixed) > 0:
		how := pick(fixed, "which is", "which are") + " off [fixed] by the " + drv + " driver"
		if slices.Contains(fixed, "scatter-gather") && !slices.Contains(fixed, "tx-checksumming") {
			if st, _ := feature(nic, "tx-checksumming"); st == featFixed && strings.HasPrefix(drv, "virtio") {
				// virtio_net.c virtnet_probe: SG enters hw_features only
				// with VIRTIO_NET_F_CSUM, with the checksum.
				how += " (it offers scatter-gather only with tx-checksumming, off [fixed] too: the device has no checksum offload)"
			} else if st == featFixed {
				how += " (tx-checksumming is off [fixed] too)"
			}
		}
		return fmt.Sprintf("%s cannot be turned on: %s", setting, needs(fixed, how)), nothing
	case len(refused) > 0:
		return fmt.Sprintf("%s cannot be turned on: %s", setting, needs(refused, "which the kernel keeps off although on was requested")),
			fmt.Sprintf("find what holds %s off (ethtool -k %s), fix that, then turn on %s", andList(refused[:1]), nic.Name, setting)
	case len(off) > 0:
		return fmt.Sprintf("%s cannot be turned on alone: %s (the kernel drops %s without %s)", setting, needs(off, pick(off, "which is", "which are")+" off"), setting, andList(off)),
			fmt.Sprintf("if nothing needs %s off, turn both on: ethtool -K %s %s on %s on (and persist them)", andList(off), nic.Name, strings.Join(ethtoolKeys(off), " on "), setting)
	case self == featRefused:
		return fmt.Sprintf("%s cannot be turned on: the kernel keeps it off although on was requested (%s)", setting, selfDetail),
			fmt.Sprintf("find what holds %s off (ethtool -k %s: a feature it depends on, or the %s driver), fix that, then rerun kaudit", setting, nic.Name, drv)
	}
	return "", ""
}

// ethtoolKeys are the ethtool -K keywords of features.
func ethtoolKeys(fs []string) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = cmp.Or(map[string]string{"scatter-gather": "sg", "tx-checksumming": "tx"}[f], f)
	}
	return out
}

func andList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func pick(xs []string, one, many string) string {
	if len(xs) == 1 {
		return one
	}
	return many
}

// NICDriver is the NIC's driver name for a message ("NIC" when unknown).
func NICDriver(n *facts.NIC) string {
	return cmp.Or(n.Driver, "NIC")
}
