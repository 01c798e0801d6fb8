package simhost

import (
	"fmt"
	"strings"
)

// Column lists of /proc/net/netstat TcpExt as two kernel eras print them.
var (
	tcpExtOld = strings.Fields(`SyncookiesSent SyncookiesRecv SyncookiesFailed EmbryonicRsts PruneCalled RcvPruned OfoPruned OutOfWindowIcmps LockDroppedIcmps ArpFilter TW TWRecycled TWKilled PAWSPassive PAWSActive PAWSEstab DelayedACKs DelayedACKLocked DelayedACKLost ListenOverflows ListenDrops TCPPrequeued TCPDirectCopyFromBacklog TCPDirectCopyFromPrequeue TCPPrequeueDropped TCPHPHits TCPHPHitsToUser TCPPureAcks TCPHPAcks TCPRenoRecovery TCPSackRecovery TCPSACKReneging TCPFACKReorder TCPSACKReorder TCPRenoReorder TCPTSReorder TCPFullUndo TCPPartialUndo TCPDSACKUndo TCPLossUndo TCPLostRetransmit TCPRenoFailures TCPSackFailures TCPLossFailures TCPFastRetrans TCPForwardRetrans TCPSlowStartRetrans TCPTimeouts TCPLossProbes TCPLossProbeRecovery TCPRenoRecoveryFail TCPSackRecoveryFail TCPSchedulerFailed TCPRcvCollapsed TCPDSACKOldSent TCPDSACKOfoSent TCPDSACKRecv TCPDSACKOfoRecv TCPAbortOnData TCPAbortOnClose TCPAbortOnMemory TCPAbortOnTimeout TCPAbortOnLinger TCPAbortFailed TCPMemoryPressures TCPSACKDiscard TCPDSACKIgnoredOld TCPDSACKIgnoredNoUndo TCPSpuriousRTOs TCPMD5NotFound TCPMD5Unexpected TCPSackShifted TCPSackMerged TCPSackShiftFallback TCPBacklogDrop TCPMinTTLDrop TCPDeferAcceptDrop IPReversePathFilter TCPTimeWaitOverflow TCPReqQFullDoCookies TCPReqQFullDrop TCPRetransFail TCPRcvCoalesce TCPOFOQueue TCPOFODrop TCPOFOMerge TCPChallengeACK TCPSYNChallenge TCPFastOpenActive TCPFastOpenActiveFail TCPFastOpenPassive TCPFastOpenPassiveFail TCPFastOpenListenOverflow TCPFastOpenCookieReqd TCPSpuriousRtxHostQueues BusyPollRxPackets TCPAutoCorking TCPFromZeroWindowAdv TCPToZeroWindowAdv TCPWantZeroWindowAdv TCPSynRetrans TCPOrigDataSent`)
	tcpExtNew = strings.Fields(`SyncookiesSent SyncookiesRecv SyncookiesFailed EmbryonicRsts PruneCalled RcvPruned OfoPruned OutOfWindowIcmps LockDroppedIcmps ArpFilter TW TWRecycled TWKilled PAWSActive PAWSEstab DelayedACKs DelayedACKLocked DelayedACKLost ListenOverflows ListenDrops TCPHPHits TCPPureAcks TCPHPAcks TCPRenoRecovery TCPSackRecovery TCPSACKReneging TCPSACKReorder TCPRenoReorder TCPTSReorder TCPFullUndo TCPPartialUndo TCPDSACKUndo TCPLossUndo TCPLostRetransmit TCPRenoFailures TCPSackFailures TCPLossFailures TCPFastRetrans TCPSlowStartRetrans TCPTimeouts TCPLossProbes TCPLossProbeRecovery TCPRenoRecoveryFail TCPSackRecoveryFail TCPRcvCollapsed TCPDSACKOldSent TCPDSACKOfoSent TCPDSACKRecv TCPDSACKOfoRecv TCPAbortOnData TCPAbortOnClose TCPAbortOnMemory TCPAbortOnTimeout TCPAbortOnLinger TCPAbortFailed TCPMemoryPressures TCPMemoryPressuresChrono TCPSACKDiscard TCPDSACKIgnoredOld TCPDSACKIgnoredNoUndo TCPSpuriousRTOs TCPMD5NotFound TCPMD5Unexpected TCPMD5Failure TCPSackShifted TCPSackMerged TCPSackShiftFallback TCPBacklogDrop PFMemallocDrop TCPMinTTLDrop TCPDeferAcceptDrop IPReversePathFilter TCPTimeWaitOverflow TCPReqQFullDoCookies TCPReqQFullDrop TCPRetransFail TCPRcvCoalesce TCPOFOQueue TCPOFODrop TCPOFOMerge TCPChallengeACK TCPSYNChallenge TCPFastOpenActive TCPFastOpenActiveFail TCPFastOpenPassive TCPFastOpenPassiveFail TCPFastOpenListenOverflow TCPFastOpenCookieReqd TCPFastOpenBlackhole TCPSpuriousRtxHostQueues BusyPollRxPackets TCPAutoCorking TCPFromZeroWindowAdv TCPToZeroWindowAdv TCPWantZeroWindowAdv TCPSynRetrans TCPOrigDataSent TCPHystartTrainDetect TCPHystartTrainCwnd TCPHystartDelayDetect TCPHystartDelayCwnd TCPACKSkippedSynRecv TCPACKSkippedPAWS TCPACKSkippedSeq TCPACKSkippedFinWait2 TCPACKSkippedTimeWait TCPACKSkippedChallenge TCPWinProbe TCPKeepAlive TCPMTUPFail TCPMTUPSuccess TCPDelivered TCPDeliveredCE TCPAckCompressed TCPZeroWindowDrop TCPRcvQDrop TCPWqueueTooBig TCPFastOpenPassiveAltKey TcpTimeoutRehash TcpDuplicateDataRehash TCPDSACKRecvSegs TCPDSACKIgnoredDubious TCPMigrateReqSuccess TCPMigrateReqFailure`)
)

// Netstat renders /proc/net/netstat with the given non-zero TcpExt counters.
func Netstat(old bool, counters map[string]int64) string {
	cols := tcpExtNew
	if old {
		cols = tcpExtOld
	}
	vals := make([]string, len(cols))
	for i, c := range cols {
		vals[i] = fmt.Sprint(counters[c])
	}
	ip := "IpExt: InNoRoutes InTruncatedPkts InMcastPkts OutMcastPkts InBcastPkts OutBcastPkts InOctets OutOctets InMcastOctets OutMcastOctets InBcastOctets OutBcastOctets\nIpExt: 0 0 0 0 0 0 918273645 1827364554 0 0 0 0\n"
	return "TcpExt: " + strings.Join(cols, " ") + "\nTcpExt: " + strings.Join(vals, " ") + "\n" + ip
}

// Listen is one listener for SS.
type Listen struct {
	Addr    string // 0.0.0.0, [::], *
	Port    int
	Backlog int
	Queue   int
	PID     int
	Proc    string
}

// SS renders `ss -ltnp` output; old selects the iproute2 3.x/4.x layout.
func SS(old bool, ls ...Listen) string {
	var b strings.Builder
	if old {
		b.WriteString("State      Recv-Q Send-Q Local Address:Port               Peer Address:Port              \n")
	} else {
		b.WriteString("State  Recv-Q Send-Q Local Address:Port  Peer Address:Port Process                                    \n")
	}
	for _, l := range ls {
		local := fmt.Sprintf("%s:%d", l.Addr, l.Port)
		peer := "0.0.0.0:*"
		if strings.HasPrefix(l.Addr, "[") || l.Addr == "*" || l.Addr == "::" {
			peer = "[::]:*"
			if old {
				peer = ":::*"
			}
		}
		if old && l.Addr == "[::]" {
			local = fmt.Sprintf(":::%d", l.Port)
		}
		users := ""
		if l.PID > 0 {
			users = fmt.Sprintf(`users:(("%s",pid=%d,fd=%d))`, l.Proc, l.PID, 100+l.Port%50)
		}
		if old {
			fmt.Fprintf(&b, "LISTEN     %-6d %-6d %-33s %-34s %s\n", l.Queue, l.Backlog, local, peer, users)
		} else {
			fmt.Fprintf(&b, "LISTEN %-6d %-6d %18s %18s %s\n", l.Queue, l.Backlog, local, peer, users)
		}
	}
	return b.String()
}

// RingIoctl renders `ethtool -g` as ethtool 3.x/4.x prints it.
func RingIoctl(name string, rxMax, txMax, rx, tx int) string {
	return fmt.Sprintf("Ring parameters for %s:\nPre-set maximums:\nRX:\t\t%d\nRX Mini:\t0\nRX Jumbo:\t0\nTX:\t\t%d\nCurrent hardware settings:\nRX:\t\t%d\nRX Mini:\t0\nRX Jumbo:\t0\nTX:\t\t%d\n\n", name, rxMax, txMax, rx, tx)
}

// RingNetlink renders `ethtool -g` as ethtool 6.x prints it.
func RingNetlink(name string, rxMax, txMax, rx, tx int) string {
	return fmt.Sprintf("Ring parameters for %s:\nPre-set maximums:\nRX:\t\t\t%d\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t%d\nTX push buff len:\tn/a\nCurrent hardware settings:\nRX:\t\t\t%d\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t%d\nRX Buf Len:\t\tn/a\nCQE Size:\t\tn/a\nTX Push:\t\toff\nRX Push:\t\toff\nTX push buff len:\tn/a\nTCP data split:\t\tn/a\n", name, rxMax, txMax, rx, tx)
}

// Features renders the top-level lines of `ethtool -k`.
func Features(name string, tso, gso, gro string) string {
	return fmt.Sprintf("Features for %s:\nrx-checksumming: on\ntx-checksumming: on\nscatter-gather: on\ntcp-segmentation-offload: %s\ngeneric-segmentation-offload: %s\ngeneric-receive-offload: %s\nlarge-receive-offload: off [fixed]\nrx-vlan-offload: on\ntx-vlan-offload: on\nntuple-filters: off\nreceive-hashing: on\nhighdma: on [fixed]\n", name, tso, gso, gro)
}
