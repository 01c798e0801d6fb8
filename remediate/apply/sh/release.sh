# kaudit release script: the last step of a run on a host, once it is
# verified, restored or left unchanged. Its header (rendered by
# ReleaseScript) sets the host lock's and lease's variables (hold in
# lib.sh). Steps and their ok detail:
#
#	lease    released (KDIR/lease was this run's and is removed), or
#	         not-held (another run's, or none)
#	done     -

hold release release
say "done" ok -
