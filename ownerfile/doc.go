// Package ownerfile creates the files and directories only their owner may
// read or write: the ledger, its directory, the probe cache. On Unix that
// is 0600 and 0700. On Windows, where modes mean nothing, it is a protected
// DACL granting the user, SYSTEM and Administrators, which is what the
// user's profile directories (%LOCALAPPDATA%) grant: made explicit, so that
// a file elsewhere does not take a wider list from its directory. Check
// says whether a file is so. It knows nothing of what the files hold.
package ownerfile
