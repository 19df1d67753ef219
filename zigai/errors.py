"""The exception root of zigai and the subsystem bases every named error derives from.

Every failure zigai itself raises is an instance of :class:`ZigAIError`.  Each
subsystem has one base below it, and every *named* error of the specification
(``RunTimedOut``, ``ResponseTooLarge``, ``InvalidJsonSchema`` ...) is a class
with exactly that name, defined in the module that raises it and derived from
its subsystem base.  Application exceptions raised from callbacks (tools,
validators, hooks, custom transports) pass through unwrapped.

Invariants:

* every error pickles and unpickles to an equal message and equal attributes
  (constructors pass only the message positionally to ``Exception``; extra
  data lives in attributes, which ``BaseException.__reduce__`` carries);
* no error message or attribute ever contains a configured credential.

The tree (bases here, named leaves in their modules)::

    ZigAIError
    ├── JsonError                 zigai.json          MalformedJson, JsonLimitExceeded
    │                                                 (DocumentTooLarge, ValueTooLarge,
    │                                                 NestingTooDeep, TooManyItems)
    ├── MessageError              zigai.messages      InvalidMessagePart, InvalidProviderDetails
    │                             zigai.usage         InvalidUsage (UsageNotCallable)
    │                             zigai.pricing       InvalidPrice, InvalidPriceTable
    ├── HistoryError              zigai.history       InvalidHistory, UnsupportedHistoryVersion,
    │                                                 HistoryTooLarge, HistoryClosed,
    │                                                 InvalidHistoryProcessor
    ├── CodecError                zigai.codecs        InvalidPydanticAiMessages,
    │                                                 UnconvertiblePydanticAiMessages
    ├── JsonSchemaError           zigai.json_schema   InvalidJsonSchema, UnsupportedJsonSchema,
    │                                                 OutputSchemaValidationFailed
    ├── SecurityError             zigai.security      UrlPolicyViolation
    │                             zigai.child_process InvalidChildEnvironment
    ├── TransportError            zigai.transport     ResponseTooLarge, ResponseHeadersTooLarge,
    │                                                 StreamLineTooLarge,
    │                                                 TransportConnectionFailed, TransportTimedOut,
    │                                                 TransportDecodeFailed, RedirectRejected,
    │                                                 InvalidTransportRequest
    ├── HttpServerError           zigai.http_server   ClientTimedOut, ClientGone
    ├── ProviderRequestError      zigai.provider      RateLimited, ProviderServerError,
    │                                                 ProviderClientError (ProviderAuthError,
    │                                                 ProviderNotFound, ProviderBadRequest),
    │                                                 UnexpectedRedirect, ProviderConnectionError,
    │                                                 ProviderResponseDecodeError
    ├── ProviderError             zigai.providers.*   encoding/decoding failures of one wire protocol
    │                             zigai.provider.operations UnsupportedProviderOperation
    │                             zigai.provider.discovery ModelDiscoveryError
    │                                                 (DiscoveryLimitExceeded, InvalidModelListing,
    │                                                 DuplicateDiscoveredModel, DiscoveryResultClosed)
    │                             zigai.provider.files ProviderFileError (InvalidProviderFileInput,
    │                                                 ProviderFileTooLarge, ForeignProviderFile,
    │                                                 InvalidProviderFileHandle,
    │                                                 InvalidProviderFileResponse,
    │                                                 ProviderFileResultClosed,
    │                                                 UploadSessionRejected)
    │                             zigai.providers.sse SseEventTooLarge
    │                             zigai.providers.http InvalidProviderConfiguration,
    │                                                 InvalidProviderRequest, ProviderHeaderConflict
    │                             zigai.providers.anthropic AnthropicDecodeError (also a
    │                                                 ProviderResponseDecodeError), AnthropicEncodeError
    │                             zigai.providers.google GoogleDecodeError (also a
    │                                                 ProviderResponseDecodeError), GoogleEncodeError
    │                             zigai.providers.vertex_ai InvalidVertexResource
    │                             zigai.providers.openai OpenAIDecodeError (also a
    │                                                 ProviderResponseDecodeError), OpenAIEncodeError
    │                             zigai.providers.openai_compatible OpenAICompatibleDecodeError
    │                                                 (also a ProviderResponseDecodeError)
    │                             zigai.providers.azure_openai InvalidAzureResource,
    │                                                 InvalidAzureDeployment
    │                             zigai.providers.xai XaiToolError (also an OpenAIEncodeError)
    │                             zigai.providers.bedrock InvalidBedrockRegion,
    │                                                 InvalidBedrockModelId, EventStreamNeedsChunks,
    │                                                 BedrockDecodeError (also a
    │                                                 ProviderResponseDecodeError), BedrockEncodeError,
    │                                                 MissingAwsRegion (an InvalidBedrockRegion),
    │                                                 AwsCredentialsError (NoAwsCredentials,
    │                                                 IncompleteAwsCredentials, AwsProfileNotFound,
    │                                                 UnsupportedAwsCredentialSource,
    │                                                 CredentialProcessFailed,
    │                                                 MetadataCredentialsError), AwsConfigError
    │                             zigai.providers.eventstream MalformedEventStream
    │                                                 (EventStreamChecksumMismatch,
    │                                                 EventStreamMessageTooLarge)
    │                             zigai.providers.cohere CohereDecodeError (also a
    │                                                 ProviderResponseDecodeError), CohereEncodeError
    │                             zigai.providers.mistral MistralDecodeError (also a
    │                                                 ProviderResponseDecodeError), MistralEncodeError,
    │                                                 InvalidConversationId, ConversationHistoryClosed
    │                             zigai.providers._native NativeDecodeError, NativeEncodeError
    │                                                 (the bases of the native routes' errors)
    │                             zigai.providers.openrouter InvalidRouting
    │                             zigai.providers.snowflake InvalidSnowflakeAccount,
    │                                                 InvalidSnowflakeReasoning
    ├── SettingsError             zigai.settings      InvalidModelSettings, UnsupportedModelSetting,
    │                                                 ExtraBodyRejected, ExtraBodyTooLarge,
    │                                                 ForbiddenRequestHeader, RequestHeadersTooLarge
    ├── ModelError                zigai.model         UnsupportedModelFeature, InvalidToolDefinition,
    │                                                 InvalidStreamEvent, InvalidProfileOverride
    │                             zigai.testing       SchemaGenerationFailed, MissingModelFunction,
    │                                                 InvalidFunctionResponse, InvalidTestModelConfig
    │                             zigai.models        InvalidModelString (UnknownModelProvider),
    │                                                 MissingCredentials, InvalidFallback,
    │                                                 InvalidSelection
    │                             zigai.models.catalog ModelCatalogError (InvalidCatalogEntry,
    │                                                 ModelCatalogCollision,
    │                                                 InvalidCatalogReplacement,
    │                                                 InvalidCatalogSourceLink,
    │                                                 InvalidCatalogSource (UnsortedCatalogSource),
    │                                                 DuplicateCanonicalModel,
    │                                                 DiscoveredCatalogClosed)
    ├── ModelRetry                zigai.tool          control flow: a tool asks the model to retry
    ├── ToolRefused               zigai.tool          control flow: a tool policy refuses a call
    ├── ToolError                 zigai.tool          InvalidToolArguments, ToolTimedOut,
    │                                                 ToolDefinitionError, ToolRetriesExceeded,
    │                                                 ToolResultTooLarge, ToolQueueOverflow,
    │                                                 ToolFollowUpOverflow, InvalidFollowUpMessage,
    │                                                 DuplicateToolName, DependencyTypeMismatch,
    │                                                 ToolThreadLimitReached
    │                             zigai.reflect       DecodeError, EncodeError
    ├── AgentError                zigai.control       RunTimedOut, Cancelled
    │                             zigai.agent         UsageLimitExceeded (RequestLimitExceeded,
    │                                                 ToolCallLimitExceeded, TokenLimitExceeded),
    │                                                 UnexpectedModelBehavior (ResponseTruncated,
    │                                                 ContentFiltered, IncompleteToolCall,
    │                                                 EmptyModelResponse), OutputRetriesExceeded,
    │                                                 PauseRequired, ResultClosed,
    │                                                 InvalidAgentConfiguration (UnsupportedKeyword),
    │                                                 ForeignUploadedFile, AgentFrozen, AwaitNotSupported
    │                             zigai.agent.paused_state InvalidPausedState (PausedStateTooLarge,
    │                                                 UnsupportedPausedStateVersion,
    │                                                 PausedStateIntegrityError)
    │                             zigai.agent.deferred InvalidResumeDecisions (ResumeDecisionsTooLarge,
    │                                                 UnsupportedResumeDecisionsVersion,
    │                                                 ResumeDecisionMismatch,
    │                                                 ResumeDecisionsIntegrityError
    │                                                 (ResumeDecisionsForAnotherPause))
    │                             zigai.agent.pending PendingMessageQueueClosed, InvalidPendingMessages
    │                             zigai.output        InvalidOutputSpec
    │                             zigai.diagnostics   DiagnosticsDeliveryFailed
    │                             zigai.context_budget ContextLimitExceeded (ContextPromptTooLarge,
    │                                                 ContextToolsTooLarge, ContextSchemaTooLarge,
    │                                                 ContextMediaTooLarge, ContextTokenLimitExceeded)
    ├── CapabilityError           zigai.capability    InvalidCapability, DuplicateCapabilityId,
    │                                                 UnknownCapability,
    │                                                 UnknownCapabilityDependency,
    │                                                 CapabilityDependencyCycle,
    │                                                 CapabilityConflict, CapabilityLimitExceeded,
    │                                                 LoadResolutionClosed
    ├── McpError                  zigai.mcp           McpErrorResponse (ParseError, InvalidRequest,
    │                                                 MethodNotFound, InvalidParams
    │                                                 (InvalidRequestState), InternalError,
    │                                                 HeaderMismatch, MissingRequiredClientCapability,
    │                                                 UnsupportedProtocolVersion
    │                                                 (NoCommonProtocolVersion)), McpTransportError
    │                                                 (McpConnectionFailed, McpHttpStatusError,
    │                                                 McpStreamEnded, McpServerExited,
    │                                                 McpSessionExpired),
    │                                                 InvalidMcpMessage (McpMessageTooLarge,
    │                                                 SseEventTooLarge, StdioLineTooLarge),
    │                                                 NotificationBacklogFull, InvalidMcpRequest,
    │                                                 McpRequestQueueFull, McpRequestTimedOut,
    │                                                 McpRequestCancelled, McpInputRequired,
    │                                                 McpClientClosed, InvalidServerDefinition,
    │                                                 InvalidInputResponse, McpInputRoundsExhausted
    │                                                 (under McpInputRequired), TaskExtensionRequired
    │                                                 and FeatureNotInRevision (under
    │                                                 InvalidMcpRequest), TaskWaitExhausted,
    │                                                 TaskStoreError
    │                             zigai.mcp.auth.discovery
    │                                                 McpAuthError (InvalidAuthChallenge,
    │                                                 AuthMetadataNotFound, InvalidAuthMetadata
    │                                                 (AuthMetadataTooLarge),
    │                                                 AuthorizationResponseRejected,
    │                                                 AuthorizationFailed, AuthorizationRejected,
    │                                                 TokenRequestFailed (TokenResponseTooLarge),
    │                                                 ClientRegistrationFailed)
    ├── ExecutionEnvironmentError zigai.environments InvalidPath, PathOutsideRoot, SymlinkRefused,
    │                                                 SpecialFileRefused, FileTooLarge,
    │                                                 EnvironmentClosed, InvalidCommandRequest,
    │                                                 NetworkIsolationUnavailable,
    │                                                 CommandOutputTooLarge, CommandTimedOut,
    │                                                 CommandStartFailed
    ├── MemoryStoreError          zigai.memory        InvalidMemoryRecord, InvalidTenant,
    │                                                 MemoryRecordNotFound, MemoryCapacityExceeded,
    │                                                 MemoryClosed, CompactionFailed
    ├── PlanningError             zigai.planning      InvalidPlan (UnknownDependency, PlanCycle,
    │                                                 DuplicateStepId, PlanTooLarge), UnknownPlan,
    │                                                 StaleRevision, ApprovalMissing,
    │                                                 UnexpectedApproval, InvalidStepOutput
    │                                                 (StepOutputTooLarge), PlanExecutionClosed
    ├── RuntimeServiceError       zigai.runtime       InvalidRuntimeRecord, UnknownRecord,
    │                                                 RevisionConflict, StepStateTooLarge,
    │                                                 BlobTooLarge, PromptVersionExists,
    │                                                 PromptRenderError (PromptTooLarge),
    │                                                 InvalidTaskTransition, TaskPayloadTooLarge,
    │                                                 TooManyTasks, ExecutorClosed, ServiceClosed
    ├── DurableError              zigai.durable       DurableSetupError, DurableStepUnbound,
    │                                                 DurableApprovalTimedOut, DurableRunNotFound,
    │                                                 DurableRunWaitTimedOut, DurableRunCancelled
    ├── GraphError                zigai.graph         InvalidGraphDefinition (GraphLimitExceeded),
    │                                                 InvalidGraphInput, GraphTypeMismatch,
    │                                                 UnmatchedRoute, StepLimitExceeded,
    │                                                 GraphRunFinished, ForkItemLimitExceeded,
    │                                                 InvalidGraphSnapshot
    │                                                 (UnsupportedSnapshotVersion,
    │                                                 SnapshotMismatch), VisualizationTooLarge
    │                             zigai.graph_agent   InvalidAgentStep
    ├── MultiAgentError           zigai.multi_agent   InvalidSession, DelegationDepthExceeded,
    │                                                 SessionRunLimitExceeded, SessionBudgetExceeded
    ├── EvalsError                zigai.evals         InvalidDataset, InvalidEvaluator,
    │                                                 InvalidEvaluatorResult, InvalidEvalOptions,
    │                                                 ReportClosed, TraceTelemetryMissing,
    │                                                 InvalidGraderVerdict, InvalidEvalDocument
    │                                                 (UnsupportedEvalDocumentVersion,
    │                                                 UnknownEvaluatorName,
    │                                                 AmbiguousEvaluatorName),
    │                                                 UnpicklableEvalObject, DaskNotInstalled
    ├── TelemetryError            zigai.telemetry     InvalidTraceParent, InvalidTelemetryConfig,
    │                                                 TelemetryExportFailed, OtelNotInstalled
    ├── EmbeddingsError           zigai.embeddings    InvalidEmbeddingInput (EmbeddingInputTooLarge,
    │                                                 TooManyEmbeddingInputs),
    │                                                 InvalidEmbeddingDimensions,
    │                                                 InvalidEmbeddingResponse (also a
    │                                                 ProviderResponseDecodeError),
    │                                                 EmbeddingResultClosed
    ├── UiError                   zigai.ui            InvalidClientMessages (ClientMessagesTooLarge),
    │                                                 InvalidClientState (StateTooLarge),
    │                                                 UnknownInterrupt, InvalidApprovalReply,
    │                                                 ReplayGap, ReplayTimedOut
    ├── AcpError                  zigai.acp           AcpProtocolError, AcpRemoteError,
    │                                                 AcpConnectionClosed, AcpStateError,
    │                                                 AcpInvalidParams (AcpPathOutsideRoot),
    │                                                 AcpPermissionRejected, AcpRequestTimedOut,
    │                                                 AcpMessageTooLarge, AcpPromptUpdatesTooLarge
    ├── RealtimeError             zigai.realtime      RealtimeCodecError (RealtimeFrameTooLarge,
    │                                                 UnknownRealtimeFrame), RealtimeConnectionError,
    │                                                 RealtimeConnectionLost (RealtimeSendTimedOut),
    │                                                 RealtimeSessionError, RealtimeSessionClosed,
    │                                                 RealtimeTurnTooLarge
    ├── AgentSpecError            zigai.agent_spec    InvalidAgentSpec, UnresolvedReference,
    │                                                 MissingEnvironment, ProviderValidationFailed,
    │                                                 AgentSpecClosed (its dry run raises the
    │                                                 CapabilityError classes above for capability
    │                                                 structure, e.g. CapabilityDependencyCycle)
    ├── HarnessError              zigai.harness       InvalidHarness, ArtifactLimitExceeded,
    │                                                 HarnessResultClosed
    ├── CliError                  zigai.cli           CliUsageError (InvalidCliConfig,
    │                                                 InvalidPauseFile), OutputFileNotWritten,
    │                                                 CassetteReplayError
    └── ConformanceError          zigai.conformance   InvalidCassette, InvalidScenarios,
                                                      DuplicateScenarioId
"""

from __future__ import annotations

__all__ = [
    "ZigAIError",
    "JsonError",
    "MessageError",
    "HistoryError",
    "CodecError",
    "JsonSchemaError",
    "SecurityError",
    "TransportError",
    "HttpServerError",
    "ProviderRequestError",
    "ProviderError",
    "SettingsError",
    "ModelError",
    "ToolError",
    "AgentError",
    "CapabilityError",
    "McpError",
    "ExecutionEnvironmentError",
    "MemoryStoreError",
    "PlanningError",
    "RuntimeServiceError",
    "DurableError",
    "GraphError",
    "MultiAgentError",
    "EvalsError",
    "TelemetryError",
    "EmbeddingsError",
    "UiError",
    "AcpError",
    "RealtimeError",
    "AgentSpecError",
    "HarnessError",
    "CliError",
    "ConformanceError",
]


class ZigAIError(Exception):
    """Root of every error zigai raises itself."""


class JsonError(ZigAIError):
    """Bounded JSON preflight or decoding failed."""


class MessageError(ZigAIError):
    """A message or part could not be constructed as requested."""


class HistoryError(ZigAIError):
    """Serialized history could not be read, written or processed."""


class CodecError(ZigAIError):
    """An external persistence format (PydanticAI JSON) was invalid or has no zigai form."""


class JsonSchemaError(ZigAIError):
    """A JSON Schema was malformed, unsupported, or a value failed it."""


class SecurityError(ZigAIError):
    """An outbound URL or header broke the security policy."""


class TransportError(ZigAIError):
    """The HTTP transport could not complete an exchange within its limits."""


class HttpServerError(ZigAIError):
    """zigai's HTTP server core could not read a request from its client within the limits."""


class ProviderRequestError(ZigAIError):
    """A provider answered with a non-success status (normalized category)."""


class ProviderError(ZigAIError):
    """A provider adapter could not encode a request or decode a response."""


class SettingsError(ZigAIError):
    """Model settings were invalid or not supported by the resolved profile."""


class ModelError(ZigAIError):
    """A model contract violation or an unsupported requested feature."""


class ToolError(ZigAIError):
    """A tool definition or tool invocation broke the tool contract."""


class AgentError(ZigAIError):
    """Agent validation, limit, run-control or lifecycle failure."""


class CapabilityError(ZigAIError):
    """A capability composition is malformed or a capability load cannot be planned."""


class McpError(ZigAIError):
    """Model Context Protocol client or server failure."""


class ExecutionEnvironmentError(ZigAIError):
    """A rooted filesystem operation or a command in an execution environment was refused."""


class MemoryStoreError(ZigAIError):
    """A memory store operation was invalid, unauthorized for the tenant, or over capacity."""


class PlanningError(ZigAIError):
    """A plan revision was invalid or its execution could not proceed."""


class RuntimeServiceError(ZigAIError):
    """A step, blob, prompt or task service operation was refused."""


class DurableError(ZigAIError):
    """Durable (DBOS) execution could not be set up or continued."""


class GraphError(ZigAIError):
    """Graph definition, run, snapshot or visualization failure."""


class MultiAgentError(ZigAIError):
    """Multi-agent session, scope or delegation failure."""


class TelemetryError(ZigAIError):
    """Base of telemetry configuration and export failures."""


class EvalsError(ZigAIError):
    """Evaluation dataset or report failure."""


class EmbeddingsError(ZigAIError):
    """Embedding input validation, response decoding or result lifetime failure."""


class UiError(ZigAIError):
    """Browser adapter failure: untrusted client messages, interrupts or the replay log."""


class AcpError(ZigAIError):
    """Agent Client Protocol client failure."""


class RealtimeError(ZigAIError):
    """Realtime codec, connection or session failure."""


class AgentSpecError(ZigAIError):
    """Agent spec parsing, dry-run validation or resolution failure."""


class HarnessError(ZigAIError):
    """Harness configuration, artifact collection or result-ownership failure."""


class CliError(ZigAIError):
    """Command-line usage or configuration failure."""


class ConformanceError(ZigAIError):
    """A conformance kit input (cassette, scenario file) is invalid."""
