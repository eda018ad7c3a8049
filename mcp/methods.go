package mcp

// The methods the shim reads or sends, named as the go-sdk names them
// (methodCallTool, notificationCancelled, ...). Nothing outside this package
// spells a method: a typo here is a typo everywhere, and a grep finds every use.
const (
	// The legacy handshake (up to 2025-11-25): initialize, then the
	// client's notifications/initialized.
	MethodInitialize        = "initialize"
	NotificationInitialized = "notifications/initialized"
	// MethodDiscover replaces the handshake in 2026-07-28.
	MethodDiscover = "server/discover"
	MethodPing     = "ping"

	MethodListTools             = "tools/list"
	MethodCallTool              = "tools/call"
	NotificationToolListChanged = "notifications/tools/list_changed"

	MethodListResources             = "resources/list"
	MethodReadResource              = "resources/read"
	MethodSubscribe                 = "resources/subscribe"
	MethodUnsubscribe               = "resources/unsubscribe"
	MethodListResourceTemplates     = "resources/templates/list"
	NotificationResourceUpdated     = "notifications/resources/updated"
	NotificationResourceListChanged = "notifications/resources/list_changed"

	MethodListPrompts             = "prompts/list"
	MethodGetPrompt               = "prompts/get"
	NotificationPromptListChanged = "notifications/prompts/list_changed"

	MethodSetLevel             = "logging/setLevel"
	MethodComplete             = "completion/complete"
	NotificationCancelled      = "notifications/cancelled"
	NotificationProgress       = "notifications/progress"
	NotificationLoggingMessage = "notifications/message"

	// 2026-07-28 replaces the legacy session's list_changed capability with a
	// subscription stream: the server acknowledges subscriptions/listen with
	// notifications/subscriptions/acknowledged and keeps the request open.
	MethodListen                          = "subscriptions/listen"
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"

	MethodGetTask          = "tasks/get"
	MethodTaskResult       = "tasks/result"
	MethodListTasks        = "tasks/list"
	MethodCancelTask       = "tasks/cancel"
	NotificationTaskStatus = "notifications/tasks/status"

	// Requests a server sends to its client.
	MethodElicit                 = "elicitation/create"
	MethodCreateMessage          = "sampling/createMessage"
	MethodListRoots              = "roots/list"
	NotificationRootsListChanged = "notifications/roots/list_changed"
)
