package facts

// ErrorKind says why a host could not be audited or changed. It is defined
// here, at the bottom of the import graph, so that the transport (which
// classifies failures) and the report (which carries them) share one type
// without the report importing the SSH transport.
type ErrorKind string

// Error kinds, as they appear in the JSON report.
const (
	KindUnreachable ErrorKind = "unreachable"
	KindAuth        ErrorKind = "auth"
	KindHostKey     ErrorKind = "hostkey"
	KindTimeout     ErrorKind = "timeout"
	KindProtocol    ErrorKind = "protocol"
	// KindLocal is a failure of kaudit's own machine (out of open files,
	// memory or disk), never of the host: kaudit serve fails such a scan
	// instead of counting its hosts.
	KindLocal ErrorKind = "local"
)

// ErrorKinds lists every kind of host error, in the order metrics list
// them. KindLocal is not one: it is kaudit's fault, not the host's.
var ErrorKinds = []ErrorKind{KindUnreachable, KindAuth, KindHostKey, KindTimeout, KindProtocol}
