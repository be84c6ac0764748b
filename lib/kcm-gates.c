/* SPDX-License-Identifier: Apache-2.0 */
/* lib/kcm-gates.c: written by tools/gen-kcm-gates.py; do not edit. Every feature gate of
 * kube-controller-manager v1.37.2 with all its versioned specs (kcm-catalogue.h), read from
 * k8s.io/kubernetes v1.37.2 pkg/features/kube_features.go and the v0.37.2 modules
 * apiserver/pkg/features, apiextensions-apiserver/pkg/features, client-go/features,
 * controller-manager/pkg/features, component-base/{logs/api/v1,metrics/features,
 * zpages/features} (their VersionedSpecs and pkg/features' dependency map). Each entry's
 * min compatibility minor is component-base's completed one (0: none). */
#include "lib/kcm-catalogue.h"

/* clang-format off */
const struct kcm_gate_spec kcm_gate_specs[] = {
        {"APIResponseCompression", NULL, 2, (const struct kcm_gate_version[]){
                {8, 0, KCM_SPEC_ALPHA, false, false},
                {16, 0, KCM_SPEC_BETA, true, false},
        }},
        {"APIServerIdentity", NULL, 2, (const struct kcm_gate_version[]){
                {20, 0, KCM_SPEC_ALPHA, false, false},
                {26, 0, KCM_SPEC_BETA, true, false},
        }},
        {"APIServerWebhookAuthenticationToken", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"APIServingWithRoutine", NULL, 1, (const struct kcm_gate_version[]){
                {30, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"AggregatedDiscoveryRemoveBetaType", NULL, 3, (const struct kcm_gate_version[]){
                {0, 0, KCM_SPEC_GA, false, false},
                {33, 0, KCM_SPEC_DEPRECATED, true, false},
                {35, 0, KCM_SPEC_DEPRECATED, true, true},
        }},
        {"AllowDNSOnlyNodeCSR", NULL, 2, (const struct kcm_gate_version[]){
                {0, 0, KCM_SPEC_GA, true, false},
                {31, 0, KCM_SPEC_DEPRECATED, false, false},
        }},
        {"AllowInsecureKubeletCertificateSigningRequests", NULL, 2, (const struct kcm_gate_version[]){
                {0, 0, KCM_SPEC_GA, true, false},
                {31, 0, KCM_SPEC_DEPRECATED, false, false},
        }},
        {"AllowOverwriteTerminationGracePeriodSeconds", NULL, 3, (const struct kcm_gate_version[]){
                {0, 0, KCM_SPEC_GA, true, false},
                {32, 0, KCM_SPEC_DEPRECATED, false, false},
                {35, 0, KCM_SPEC_DEPRECATED, false, true},
        }},
        {"AllowParsingUserUIDFromCertAuth", NULL, 1, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_BETA, true, false},
        }},
        {"AllowServiceExternalIPs", NULL, 1, (const struct kcm_gate_version[]){
                {0, 0, KCM_SPEC_GA, true, false},
        }},
        {"AllowUnsafeMalformedObjectDeletion", NULL, 2, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"AtomicFIFO", NULL, 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"AtomicWriteVolumeUserFields", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"AuthorizePodWebsocketUpgradeCreatePermission", NULL, 1, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_BETA, true, false},
        }},
        {"CBORServingAndStorage", NULL, 1, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"CPUManagerPolicyAlphaOptions", NULL, 1, (const struct kcm_gate_version[]){
                {23, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"CPUManagerPolicyBetaOptions", NULL, 1, (const struct kcm_gate_version[]){
                {23, 0, KCM_SPEC_BETA, true, false},
        }},
        {"CPUManagerPolicyOptions", NULL, 3, (const struct kcm_gate_version[]){
                {22, 0, KCM_SPEC_ALPHA, false, false},
                {23, 0, KCM_SPEC_BETA, true, false},
                {33, 0, KCM_SPEC_GA, true, true},
        }},
        {"CRDObservedGenerationTracking", NULL, 2, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_BETA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"CRDValidationRatcheting", NULL, 3, (const struct kcm_gate_version[]){
                {28, 0, KCM_SPEC_ALPHA, false, false},
                {30, 0, KCM_SPEC_BETA, true, false},
                {33, 0, KCM_SPEC_GA, true, true},
        }},
        {"CRIListStreaming", NULL, 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"CSIServiceAccountTokenSecrets", NULL, 2, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"CSIVolumeHealth", NULL, 1, (const struct kcm_gate_version[]){
                {21, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"ChangeContainerStatusOnKubeletRestart", NULL, 2, (const struct kcm_gate_version[]){
                {0, 0, KCM_SPEC_GA, true, false},
                {35, 0, KCM_SPEC_DEPRECATED, false, false},
        }},
        {"ClearingNominatedNodeNameAfterBinding", NULL, 2, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ClientsAllowCARotation", NULL, 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ClientsAllowCBOR", NULL, 1, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"ClientsAllowTLSCacheGC", NULL, 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ClientsPreferCBOR", NULL, 1, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"CloudControllerManagerWatchBasedRoutesReconciliation", NULL, 1, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"CloudControllerManagerWebhook", NULL, 1, (const struct kcm_gate_version[]){
                {27, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"ClusterTrustBundle", NULL, 3, (const struct kcm_gate_version[]){
                {27, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, false, false},
                {37, 0, KCM_SPEC_GA, true, false},
        }},
        {"ClusterTrustBundleProjection", "ClusterTrustBundle", 3, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, false, false},
                {37, 0, KCM_SPEC_GA, true, false},
        }},
        {"ComponentFlagz", NULL, 2, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ComponentStatusz", NULL, 2, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"CompositePodGroup", "GenericWorkload TopologyAwareWorkloadScheduling", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"ConcurrentWatchObjectDecode", NULL, 2, (const struct kcm_gate_version[]){
                {31, 0, KCM_SPEC_BETA, false, false},
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ConsistentListFromCacheSkipTimeoutFallback", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"ConstrainedImpersonation", NULL, 2, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ContainerCheckpoint", NULL, 2, (const struct kcm_gate_version[]){
                {25, 0, KCM_SPEC_ALPHA, false, false},
                {30, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ContainerRestartRules", NULL, 2, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ContainerStopSignals", NULL, 1, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"ContextualLogging", NULL, 2, (const struct kcm_gate_version[]){
                {24, 0, KCM_SPEC_ALPHA, false, false},
                {30, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ControllerManagerReleaseLeaderElectionLockOnExit", NULL, 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"CoordinatedLeaderElection", NULL, 2, (const struct kcm_gate_version[]){
                {31, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, false, false},
        }},
        {"CrossNamespaceVolumeDataSource", NULL, 1, (const struct kcm_gate_version[]){
                {26, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"CustomCPUCFSQuotaPeriod", NULL, 2, (const struct kcm_gate_version[]){
                {12, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_GA, true, false},
        }},
        {"CustomResourceFieldSelectors", NULL, 3, (const struct kcm_gate_version[]){
                {30, 0, KCM_SPEC_ALPHA, false, false},
                {31, 0, KCM_SPEC_BETA, true, false},
                {32, 0, KCM_SPEC_GA, true, true},
        }},
        {"DRAAdminAccess", "DynamicResourceAllocation", 3, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"DRAConsumableCapacity", "DynamicResourceAllocation", 2, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"DRADerivedAttributes", "DynamicResourceAllocation", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus DynamicResourceAllocation", 2, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"DRADeviceCompatibilityGroups", "DRAPartitionableDevices DynamicResourceAllocation", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"DRADeviceTaintRules", "DRADeviceTaints", 3, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, false, false},
                {37, 0, KCM_SPEC_GA, true, false},
        }},
        {"DRADeviceTaints", "DynamicResourceAllocation", 3, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
                {37, 0, KCM_SPEC_GA, true, false},
        }},
        {"DRAExtendedResource", "DynamicResourceAllocation", 3, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
                {37, 0, KCM_SPEC_GA, true, true},
        }},
        {"DRAFractionalCapacityRange", "DRAConsumableCapacity", 2, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_BETA, false, false},
                {37, 37, KCM_SPEC_BETA, true, false},
        }},
        {"DRAListTypeAttributes", "DynamicResourceAllocation", 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"DRANodeAllocatableResources", "DynamicResourceAllocation", 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"DRAOptionalNodeOperations", "DynamicResourceAllocation NodeDeclaredFeatures", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"DRAPartitionableDevices", "DynamicResourceAllocation", 2, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"DRAPartitionableDevicesType", "DRAPartitionableDevices DRAResourcePoolStatus DynamicResourceAllocation", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"DRAPrioritizedList", "DynamicResourceAllocation", 4, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, false},
                {37, 0, KCM_SPEC_GA, true, true},
        }},
        {"DRAResourceClaimDeviceStatus", NULL, 3, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, true, false},
                {37, 0, KCM_SPEC_GA, true, true},
        }},
        {"DRAResourceClaimGranularStatusAuthorization", "DRAResourceClaimDeviceStatus DynamicResourceAllocation", 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"DRAResourcePoolStatus", "DynamicResourceAllocation", 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"DRASchedulerFilterTimeout", "DynamicResourceAllocation", 1, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_BETA, true, false},
        }},
        {"DRAWorkloadResourceClaims", "DynamicResourceAllocation GenericWorkload", 2, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, false, false},
        }},
        {"DeclarativeValidation", NULL, 2, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"DeclarativeValidationBeta", "DeclarativeValidation", 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"DeclarativeValidationTakeover", "DeclarativeValidation", 3, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_BETA, false, false},
                {36, 0, KCM_SPEC_DEPRECATED, false, false},
                {37, 0, KCM_SPEC_DEPRECATED, false, true},
        }},
        {"DefaultPodSysctls", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"DeploymentReplicaSetTerminatingReplicas", NULL, 2, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_BETA, true, false},
        }},
        {"DetectCacheInconsistency", NULL, 1, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_BETA, true, false},
        }},
        {"DisableAllocatorDualWrite", "MultiCIDRServiceAllocator", 4, (const struct kcm_gate_version[]){
                {31, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, false, false},
                {34, 0, KCM_SPEC_GA, true, false},
                {35, 0, KCM_SPEC_GA, true, true},
        }},
        {"DisableCPUQuotaWithExclusiveCPUs", NULL, 3, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_DEPRECATED, true, false},
                {37, 0, KCM_SPEC_DEPRECATED, true, true},
        }},
        {"DisableNodeKubeProxyVersion", NULL, 4, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_ALPHA, false, false},
                {31, 0, KCM_SPEC_DEPRECATED, false, false},
                {33, 0, KCM_SPEC_DEPRECATED, true, false},
                {36, 0, KCM_SPEC_DEPRECATED, true, true},
        }},
        {"DynamicResourceAllocation", NULL, 4, (const struct kcm_gate_version[]){
                {26, 0, KCM_SPEC_ALPHA, false, false},
                {32, 0, KCM_SPEC_BETA, false, false},
                {34, 0, KCM_SPEC_GA, true, false},
                {35, 0, KCM_SPEC_GA, true, true},
        }},
        {"EmptyDirVolumeMode", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"EnvFiles", NULL, 2, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_BETA, true, false},
        }},
        {"EtcdRangeStream", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"EventedPLEG", "PLEGOnDemandRelist", 1, (const struct kcm_gate_version[]){
                {26, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"EvictionRequestAPI", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"ExcludeAdmissionWebhookVirtualResources", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ExecProbeTimeout", NULL, 2, (const struct kcm_gate_version[]){
                {20, 0, KCM_SPEC_GA, true, false},
                {35, 0, KCM_SPEC_GA, true, true},
        }},
        {"ExtendWebSocketsToKubelet", "NodeDeclaredFeatures", 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ExternalServiceAccountTokenSigner", NULL, 3, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"GRPCContainerProbeTLS", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"GenericWorkload", NULL, 2, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, false, false},
        }},
        {"GitRepoVolumeDriver", NULL, 3, (const struct kcm_gate_version[]){
                {0, 0, KCM_SPEC_GA, true, false},
                {33, 0, KCM_SPEC_DEPRECATED, false, false},
                {36, 0, KCM_SPEC_DEPRECATED, false, true},
        }},
        {"GracefulNodeShutdown", NULL, 2, (const struct kcm_gate_version[]){
                {20, 0, KCM_SPEC_ALPHA, false, false},
                {21, 0, KCM_SPEC_BETA, true, false},
        }},
        {"GracefulNodeShutdownBasedOnPodPriority", "GracefulNodeShutdown", 2, (const struct kcm_gate_version[]){
                {23, 0, KCM_SPEC_ALPHA, false, false},
                {24, 0, KCM_SPEC_BETA, true, false},
        }},
        {"H2CContainerProbe", "NodeDeclaredFeatures", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"HPAConfigurableTolerance", NULL, 3, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_BETA, true, false},
                {37, 0, KCM_SPEC_GA, true, true},
        }},
        {"HPAGeneration", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"HPAOptimizedSelectorStore", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"HPAScaleToZero", NULL, 2, (const struct kcm_gate_version[]){
                {16, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"HostnameOverride", NULL, 3, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_BETA, true, false},
                {37, 0, KCM_SPEC_GA, true, true},
        }},
        {"HugepageAwareEviction", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ImageMaximumGCAge", NULL, 3, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_ALPHA, false, false},
                {30, 0, KCM_SPEC_BETA, true, false},
                {35, 0, KCM_SPEC_GA, true, true},
        }},
        {"ImageVolume", NULL, 4, (const struct kcm_gate_version[]){
                {31, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, false, false},
                {35, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"ImageVolumeWithDigest", "ImageVolume", 1, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"InOrderInformers", NULL, 2, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"InOrderInformersBatchProcess", NULL, 1, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_BETA, true, false},
        }},
        {"InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScaling NodeDeclaredFeatures PodLevelResources", 2, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"InPlacePodVerticalScaling", NULL, 3, (const struct kcm_gate_version[]){
                {27, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, true, false},
                {35, 0, KCM_SPEC_GA, true, true},
        }},
        {"InPlacePodVerticalScalingExclusiveCPUs", "InPlacePodVerticalScaling", 1, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"InPlacePodVerticalScalingExclusiveMemory", "InPlacePodVerticalScaling", 1, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"InPlacePodVerticalScalingInitContainers", "InPlacePodVerticalScaling NodeDeclaredFeatures", 2, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
                {37, 0, KCM_SPEC_GA, true, true},
        }},
        {"InPlacePodVerticalScalingMemoryBackedVolumes", "InPlacePodVerticalScaling NodeDeclaredFeatures", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"InPlacePodVerticalScalingSchedulerPreemption", "InPlacePodVerticalScaling", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"InformerResourceVersion", NULL, 2, (const struct kcm_gate_version[]){
                {30, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_GA, true, false},
        }},
        {"InterPodAffinityHostnameFastPath", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"JobManagedBy", NULL, 3, (const struct kcm_gate_version[]){
                {30, 0, KCM_SPEC_ALPHA, false, false},
                {32, 0, KCM_SPEC_BETA, true, false},
                {35, 0, KCM_SPEC_GA, true, true},
        }},
        {"KMSv1", NULL, 3, (const struct kcm_gate_version[]){
                {0, 0, KCM_SPEC_GA, true, false},
                {28, 0, KCM_SPEC_DEPRECATED, true, false},
                {29, 0, KCM_SPEC_DEPRECATED, false, false},
        }},
        {"KubeProxyIPVS", NULL, 2, (const struct kcm_gate_version[]){
                {0, 0, KCM_SPEC_GA, true, false},
                {37, 0, KCM_SPEC_DEPRECATED, true, false},
        }},
        {"KubeProxyNFTablesLocalhostNodePorts", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"KubeletAllocatedPodsEndpoint", "InPlacePodVerticalScaling", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"KubeletCgroupDriverFromCRI", NULL, 3, (const struct kcm_gate_version[]){
                {28, 0, KCM_SPEC_ALPHA, false, false},
                {31, 0, KCM_SPEC_BETA, true, false},
                {34, 0, KCM_SPEC_GA, true, true},
        }},
        {"KubeletCrashLoopBackOffMax", NULL, 2, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_BETA, true, false},
        }},
        {"KubeletEnsureSecretPulledImages", NULL, 2, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_BETA, true, false},
        }},
        {"KubeletFineGrainedAuthz", NULL, 3, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"KubeletInUserNamespace", NULL, 2, (const struct kcm_gate_version[]){
                {22, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"KubeletPSI", NULL, 3, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"KubeletPodResourcesDynamicResources", NULL, 3, (const struct kcm_gate_version[]){
                {27, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"KubeletPodResourcesGet", NULL, 3, (const struct kcm_gate_version[]){
                {27, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"KubeletPodResourcesListUseActivePods", NULL, 2, (const struct kcm_gate_version[]){
                {0, 0, KCM_SPEC_GA, false, false},
                {34, 0, KCM_SPEC_DEPRECATED, true, false},
        }},
        {"KubeletRegistrationGetOnExistsOnly", NULL, 2, (const struct kcm_gate_version[]){
                {0, 0, KCM_SPEC_GA, true, false},
                {32, 0, KCM_SPEC_DEPRECATED, false, false},
        }},
        {"KubeletSeparateDiskGC", NULL, 2, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_ALPHA, false, false},
                {31, 0, KCM_SPEC_BETA, true, false},
        }},
        {"KubeletServiceAccountTokenForCredentialProviders", NULL, 2, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, true, false},
        }},
        {"KubeletTracing", NULL, 3, (const struct kcm_gate_version[]){
                {25, 0, KCM_SPEC_ALPHA, false, false},
                {27, 0, KCM_SPEC_BETA, true, false},
                {34, 0, KCM_SPEC_GA, true, true},
        }},
        {"ListFromCacheSnapshot", NULL, 2, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, true, false},
        }},
        {"LocalStorageCapacityIsolationFSQuotaMonitoring", NULL, 2, (const struct kcm_gate_version[]){
                {15, 0, KCM_SPEC_ALPHA, false, false},
                {31, 0, KCM_SPEC_BETA, false, false},
        }},
        {"LoggingAlphaOptions", NULL, 1, (const struct kcm_gate_version[]){
                {24, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"LoggingBetaOptions", NULL, 1, (const struct kcm_gate_version[]){
                {24, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ManifestBasedAdmissionControlConfig", NULL, 2, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"MatchLabelKeysInPodAffinity", NULL, 3, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_ALPHA, false, false},
                {31, 0, KCM_SPEC_BETA, true, false},
                {33, 0, KCM_SPEC_GA, true, true},
        }},
        {"MatchLabelKeysInPodTopologySpread", NULL, 2, (const struct kcm_gate_version[]){
                {25, 0, KCM_SPEC_ALPHA, false, false},
                {27, 0, KCM_SPEC_BETA, true, false},
        }},
        {"MatchLabelKeysInPodTopologySpreadSelectorMerge", "MatchLabelKeysInPodTopologySpread", 1, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_BETA, true, false},
        }},
        {"MaxUnavailableStatefulSet", NULL, 3, (const struct kcm_gate_version[]){
                {24, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_BETA, false, false},
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"MemoryQoS", NULL, 2, (const struct kcm_gate_version[]){
                {22, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"MultiCIDRServiceAllocator", NULL, 4, (const struct kcm_gate_version[]){
                {27, 0, KCM_SPEC_ALPHA, false, false},
                {31, 0, KCM_SPEC_BETA, false, false},
                {33, 0, KCM_SPEC_GA, true, false},
                {34, 0, KCM_SPEC_GA, true, true},
        }},
        {"MutableCSINodeAllocatableCount", NULL, 4, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, false, false},
                {35, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"MutablePVNodeAffinity", NULL, 1, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"MutablePodResourcesForSuspendedJobs", NULL, 2, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"MutableSchedulingDirectivesForSuspendedJobs", NULL, 2, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"MutatingAdmissionPolicy", NULL, 3, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, false, false},
                {36, 0, KCM_SPEC_GA, true, false},
        }},
        {"NFTablesNetlink", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"NFTablesProxyMode", NULL, 3, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_ALPHA, false, false},
                {31, 0, KCM_SPEC_BETA, true, false},
                {33, 0, KCM_SPEC_GA, true, true},
        }},
        {"NativeHistograms", NULL, 2, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"NodeControllerLeaseCircuitBreaker", "AtomicFIFO", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"NodeDeclaredFeatures", NULL, 3, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
                {37, 0, KCM_SPEC_GA, true, true},
        }},
        {"NodeInclusionPolicyInPodTopologySpread", NULL, 3, (const struct kcm_gate_version[]){
                {25, 0, KCM_SPEC_ALPHA, false, false},
                {26, 0, KCM_SPEC_BETA, true, false},
                {33, 0, KCM_SPEC_GA, true, true},
        }},
        {"NodeLifecycleConditions", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"NodeLogQuery", NULL, 3, (const struct kcm_gate_version[]){
                {27, 0, KCM_SPEC_ALPHA, false, false},
                {30, 0, KCM_SPEC_BETA, false, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"NodeSwap", NULL, 4, (const struct kcm_gate_version[]){
                {22, 0, KCM_SPEC_ALPHA, false, false},
                {28, 0, KCM_SPEC_BETA, false, false},
                {30, 0, KCM_SPEC_BETA, true, false},
                {34, 0, KCM_SPEC_GA, true, true},
        }},
        {"NominatedNodeNameForExpectation", NULL, 2, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_BETA, true, false},
        }},
        {"OpenAPIEnums", NULL, 2, (const struct kcm_gate_version[]){
                {23, 0, KCM_SPEC_ALPHA, false, false},
                {24, 0, KCM_SPEC_BETA, true, false},
        }},
        {"OpportunisticBatching", NULL, 1, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_BETA, true, false},
        }},
        {"PLEGOnDemandRelist", NULL, 2, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
                {37, 0, KCM_SPEC_GA, true, true},
        }},
        {"PersistentVolumeClaimUnusedSinceTime", NULL, 2, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"PodAndContainerStatsFromCRI", NULL, 2, (const struct kcm_gate_version[]){
                {23, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, false, false},
        }},
        {"PodCertificateRequest", NULL, 3, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_BETA, false, false},
                {37, 0, KCM_SPEC_GA, true, false},
        }},
        {"PodDeletionCost", NULL, 2, (const struct kcm_gate_version[]){
                {21, 0, KCM_SPEC_ALPHA, false, false},
                {22, 0, KCM_SPEC_BETA, true, false},
        }},
        {"PodGroupPreemptionPolicy", "GenericWorkload", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"PodLevelResourceManagers", "PodLevelResources", 2, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, false, false},
        }},
        {"PodLevelResources", NULL, 2, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, true, false},
        }},
        {"PodLevelResourcesFixDefaulting", "PodLevelResources", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"PodLevelResourcesFixKubeletQOSClass", "PodLevelResources", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"PodLogsQuerySplitStreams", NULL, 1, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"PodObservedGenerationTracking", NULL, 3, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, true, false},
                {35, 0, KCM_SPEC_GA, true, true},
        }},
        {"PodReadyToStartContainersCondition", NULL, 3, (const struct kcm_gate_version[]){
                {28, 0, KCM_SPEC_ALPHA, false, false},
                {29, 0, KCM_SPEC_BETA, true, false},
                {37, 0, KCM_SPEC_GA, true, true},
        }},
        {"PodSchedulingReadiness", NULL, 3, (const struct kcm_gate_version[]){
                {26, 0, KCM_SPEC_ALPHA, false, false},
                {27, 0, KCM_SPEC_BETA, true, false},
                {30, 0, KCM_SPEC_GA, true, true},
        }},
        {"PodTopologyLabelsAdmission", NULL, 2, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_BETA, true, false},
        }},
        {"PodsAPI", NULL, 2, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"PortForwardWebsockets", NULL, 2, (const struct kcm_gate_version[]){
                {30, 0, KCM_SPEC_ALPHA, false, false},
                {31, 0, KCM_SPEC_BETA, true, false},
        }},
        {"PreferSameTrafficDistribution", NULL, 3, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, true, false},
                {35, 0, KCM_SPEC_GA, true, true},
        }},
        {"ProcMountType", "UserNamespacesSupport", 4, (const struct kcm_gate_version[]){
                {12, 0, KCM_SPEC_ALPHA, false, false},
                {31, 0, KCM_SPEC_BETA, false, false},
                {33, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"QOSReserved", NULL, 1, (const struct kcm_gate_version[]){
                {11, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"RecoverVolumeExpansionFailure", NULL, 3, (const struct kcm_gate_version[]){
                {23, 0, KCM_SPEC_ALPHA, false, false},
                {32, 0, KCM_SPEC_BETA, true, false},
                {34, 0, KCM_SPEC_GA, true, true},
        }},
        {"RecursiveReadOnlyMounts", NULL, 3, (const struct kcm_gate_version[]){
                {30, 0, KCM_SPEC_ALPHA, false, false},
                {31, 0, KCM_SPEC_BETA, true, false},
                {33, 0, KCM_SPEC_GA, true, true},
        }},
        {"ReduceDefaultCrashLoopBackOffDecay", NULL, 1, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"RelaxedEnvironmentVariableValidation", NULL, 3, (const struct kcm_gate_version[]){
                {30, 0, KCM_SPEC_ALPHA, false, false},
                {32, 0, KCM_SPEC_BETA, true, false},
                {34, 0, KCM_SPEC_GA, true, true},
        }},
        {"RelaxedServiceNameValidation", NULL, 3, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
                {37, 0, KCM_SPEC_GA, true, true},
        }},
        {"ReloadKubeletClientCAFile", NULL, 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ReloadKubeletServerCertificateFile", NULL, 1, (const struct kcm_gate_version[]){
                {31, 0, KCM_SPEC_BETA, true, false},
        }},
        {"RemoteRequestHeaderUID", NULL, 2, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ResourceHealthStatus", "DynamicResourceAllocation", 2, (const struct kcm_gate_version[]){
                {31, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ResourceHealthStatusMessage", "ResourceHealthStatus", 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"RestartAllContainersOnContainerExits", "ContainerRestartRules NodeDeclaredFeatures", 2, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"RotateKubeletServerCertificate", NULL, 2, (const struct kcm_gate_version[]){
                {7, 0, KCM_SPEC_ALPHA, false, false},
                {12, 0, KCM_SPEC_BETA, true, false},
        }},
        {"RuntimeClassInImageCriApi", NULL, 1, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"SELinuxChangePolicy", NULL, 3, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"SELinuxMount", NULL, 3, (const struct kcm_gate_version[]){
                {30, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, false, false},
                {37, 0, KCM_SPEC_GA, true, false},
        }},
        {"SELinuxMountReadWriteOncePod", NULL, 4, (const struct kcm_gate_version[]){
                {25, 0, KCM_SPEC_ALPHA, false, false},
                {27, 0, KCM_SPEC_BETA, false, false},
                {28, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"SchedulerAsyncAPICalls", NULL, 1, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_BETA, false, false},
        }},
        {"SchedulerAsyncPreemption", NULL, 2, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, true, false},
        }},
        {"SchedulerPopFromBackoffQ", NULL, 1, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_BETA, true, false},
        }},
        {"SchedulerPreQueueingHints", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"SeparateCacheWatchRPC", NULL, 3, (const struct kcm_gate_version[]){
                {28, 0, KCM_SPEC_BETA, true, false},
                {33, 0, KCM_SPEC_DEPRECATED, false, false},
                {36, 0, KCM_SPEC_DEPRECATED, false, true},
        }},
        {"SeparateTaintEvictionController", NULL, 2, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_BETA, true, false},
                {34, 0, KCM_SPEC_GA, true, true},
        }},
        {"ServiceAccountNodeAudienceRestriction", NULL, 2, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_BETA, false, false},
                {33, 0, KCM_SPEC_BETA, true, false},
        }},
        {"ServiceAccountTokenJTI", NULL, 3, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_ALPHA, false, false},
                {30, 0, KCM_SPEC_BETA, true, false},
                {32, 0, KCM_SPEC_GA, true, true},
        }},
        {"ServiceAccountTokenNodeBinding", "ServiceAccountTokenNodeBindingValidation", 3, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_ALPHA, false, false},
                {31, 0, KCM_SPEC_BETA, true, false},
                {33, 0, KCM_SPEC_GA, true, true},
        }},
        {"ServiceAccountTokenNodeBindingValidation", NULL, 3, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_ALPHA, false, false},
                {30, 0, KCM_SPEC_BETA, true, false},
                {32, 0, KCM_SPEC_GA, true, true},
        }},
        {"ServiceAccountTokenPodNodeInfo", NULL, 3, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_ALPHA, false, false},
                {30, 0, KCM_SPEC_BETA, true, false},
                {32, 0, KCM_SPEC_GA, true, true},
        }},
        {"ServiceCIDRStatusFieldWiping", NULL, 2, (const struct kcm_gate_version[]){
                {0, 0, KCM_SPEC_GA, false, false},
                {36, 0, KCM_SPEC_DEPRECATED, true, false},
        }},
        {"ShardedListAndWatch", NULL, 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"SizeBasedListCostEstimate", NULL, 1, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_BETA, true, false},
        }},
        {"StaleControllerConsistencyDaemonSet", "AtomicFIFO", 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"StaleControllerConsistencyHPA", "AtomicFIFO", 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"StaleControllerConsistencyJob", "AtomicFIFO", 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"StaleControllerConsistencyReplicaSet", "AtomicFIFO", 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"StaleControllerConsistencyStatefulSet", "AtomicFIFO", 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"StatefulSetRecreateStrategy", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"StatefulSetSemanticRevisionComparison", NULL, 1, (const struct kcm_gate_version[]){
                {0, 0, KCM_SPEC_BETA, true, false},
        }},
        {"StorageCapacityScoring", NULL, 2, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"StorageNamespaceIndex", NULL, 2, (const struct kcm_gate_version[]){
                {30, 0, KCM_SPEC_BETA, true, false},
                {33, 0, KCM_SPEC_DEPRECATED, true, false},
        }},
        {"StorageVersionAPI", "APIServerIdentity", 1, (const struct kcm_gate_version[]){
                {20, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"StorageVersionHash", NULL, 2, (const struct kcm_gate_version[]){
                {14, 0, KCM_SPEC_ALPHA, false, false},
                {15, 0, KCM_SPEC_BETA, true, false},
        }},
        {"StorageVersionMigrator", NULL, 3, (const struct kcm_gate_version[]){
                {30, 0, KCM_SPEC_ALPHA, false, false},
                {35, 0, KCM_SPEC_BETA, false, false},
                {37, 0, KCM_SPEC_GA, true, false},
        }},
        {"StrictIPCIDRValidation", NULL, 2, (const struct kcm_gate_version[]){
                {33, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"StructuredAuthenticationConfigurationEgressSelector", NULL, 1, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_BETA, true, false},
        }},
        {"StructuredAuthenticationConfigurationJWKSMetrics", NULL, 1, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_BETA, true, false},
        }},
        {"SupplementalGroupsPolicy", NULL, 3, (const struct kcm_gate_version[]){
                {31, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, true, false},
                {35, 0, KCM_SPEC_GA, true, true},
        }},
        {"SystemdWatchdog", NULL, 2, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_BETA, true, false},
                {35, 0, KCM_SPEC_GA, true, true},
        }},
        {"TaintTolerationComparisonOperators", NULL, 1, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"TokenRequestServiceAccountUIDValidation", NULL, 1, (const struct kcm_gate_version[]){
                {34, 0, KCM_SPEC_BETA, true, false},
        }},
        {"TopologyAwareWorkloadScheduling", "GenericWorkload", 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"TopologyManagerPolicyAlphaOptions", NULL, 1, (const struct kcm_gate_version[]){
                {26, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"TopologyManagerPolicyBetaOptions", NULL, 2, (const struct kcm_gate_version[]){
                {26, 0, KCM_SPEC_BETA, false, false},
                {28, 0, KCM_SPEC_BETA, true, false},
        }},
        {"TopologyManagerPolicyOptions", NULL, 3, (const struct kcm_gate_version[]){
                {26, 0, KCM_SPEC_ALPHA, false, false},
                {28, 0, KCM_SPEC_BETA, true, false},
                {32, 0, KCM_SPEC_GA, true, true},
        }},
        {"TranslateStreamCloseWebsocketRequests", NULL, 2, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_ALPHA, false, false},
                {30, 0, KCM_SPEC_BETA, true, false},
        }},
        {"UnauthenticatedHTTP2DOSMitigation", NULL, 2, (const struct kcm_gate_version[]){
                {25, 0, KCM_SPEC_BETA, false, false},
                {29, 0, KCM_SPEC_BETA, true, false},
        }},
        {"UnknownVersionInteroperabilityProxy", "APIServerIdentity", 2, (const struct kcm_gate_version[]){
                {28, 0, KCM_SPEC_ALPHA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"UnlockWhileProcessingFIFO", NULL, 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_BETA, true, false},
        }},
        {"UserNamespacesHostNetworkSupport", "NodeDeclaredFeatures UserNamespacesSupport", 1, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"UserNamespacesSupport", NULL, 4, (const struct kcm_gate_version[]){
                {25, 0, KCM_SPEC_ALPHA, false, false},
                {30, 0, KCM_SPEC_BETA, false, false},
                {33, 0, KCM_SPEC_BETA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"VolumeAttributesClass", NULL, 4, (const struct kcm_gate_version[]){
                {29, 0, KCM_SPEC_ALPHA, false, false},
                {31, 0, KCM_SPEC_BETA, false, false},
                {34, 0, KCM_SPEC_GA, true, false},
                {36, 0, KCM_SPEC_GA, true, true},
        }},
        {"VolumeBindMountOptions", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"VolumeLimitScaling", NULL, 2, (const struct kcm_gate_version[]){
                {35, 0, KCM_SPEC_ALPHA, false, false},
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"WatchCacheInitializationPostStartHook", NULL, 3, (const struct kcm_gate_version[]){
                {31, 0, KCM_SPEC_BETA, false, false},
                {36, 0, KCM_SPEC_BETA, true, false},
                {37, 0, KCM_SPEC_GA, true, true},
        }},
        {"WatchList", NULL, 4, (const struct kcm_gate_version[]){
                {27, 0, KCM_SPEC_ALPHA, false, false},
                {32, 0, KCM_SPEC_BETA, true, false},
                {33, 0, KCM_SPEC_BETA, false, false},
                {34, 0, KCM_SPEC_BETA, true, false},
        }},
        {"WatchListClient", NULL, 2, (const struct kcm_gate_version[]){
                {30, 0, KCM_SPEC_BETA, false, false},
                {35, 0, KCM_SPEC_BETA, true, false},
        }},
        {"WatchListCompression", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"WebhookRoundTripLoadBalancing", NULL, 1, (const struct kcm_gate_version[]){
                {37, 0, KCM_SPEC_BETA, true, false},
        }},
        {"WinDSR", NULL, 3, (const struct kcm_gate_version[]){
                {14, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_BETA, true, false},
                {34, 0, KCM_SPEC_GA, true, true},
        }},
        {"WinOverlay", NULL, 3, (const struct kcm_gate_version[]){
                {14, 0, KCM_SPEC_ALPHA, false, false},
                {20, 0, KCM_SPEC_BETA, true, false},
                {34, 0, KCM_SPEC_GA, true, true},
        }},
        {"WindowsCPUAndMemoryAffinity", NULL, 1, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
        }},
        {"WindowsGracefulNodeShutdown", "GracefulNodeShutdown", 2, (const struct kcm_gate_version[]){
                {32, 0, KCM_SPEC_ALPHA, false, false},
                {34, 0, KCM_SPEC_BETA, true, false},
        }},
        {"WindowsHostNetwork", NULL, 2, (const struct kcm_gate_version[]){
                {26, 0, KCM_SPEC_ALPHA, false, false},
                {33, 0, KCM_SPEC_DEPRECATED, false, false},
        }},
        {"WorkloadWithJob", "GenericWorkload", 1, (const struct kcm_gate_version[]){
                {36, 0, KCM_SPEC_ALPHA, false, false},
        }},
};
/* clang-format on */
const size_t kcm_gate_specs_n = sizeof(kcm_gate_specs) / sizeof(kcm_gate_specs[0]);
