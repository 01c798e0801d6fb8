// Package vm is kaudit's VM lab: real Linux kernels booted under QEMU (TCG,
// no KVM) from a Debian 12 image, for tests that need what a network
// namespace on the build machine's own kernel cannot give: a kernel with
// the SYN-cookie window bug (Linux commit 909172a reverted), real boots,
// reboots and power cuts, a real e1000e NIC whose ring sizes persist or not.
//
// Everything but this file carries the build tag vm:
//
//	go test -tags vm -count=1 -v ./test/vm/
//
// The tests need root and the Debian packages that lab/prepare.sh installs
// when they are missing (qemu-system-x86, qemu-utils, mmdebstrap,
// linux-source-6.1 and a kernel tool chain). prepare.sh builds two kernels
// (stock and reverted) and the root image once into
// ${KAUDIT_VM_CACHE:-/var/cache/kaudit-vmlab}/<sha256 of the inputs>; later
// runs reuse that entry. A test calls Prepare, then Boot for each guest;
// every guest is killed and its overlay removed when the test ends.
package vm
