//! Landlock and seccomp, applied to the launcher process just before it `exec`s the command.

use std::collections::BTreeMap;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::error::SandboxError;
use crate::policy::{SandboxMode, SandboxPolicy, WRITABLE_DEVICES};

/// The newest Landlock ABI whose rights we ask for; an older kernel enforces what it knows
/// (ABI 1 already covers every write and removal).
const ABI_WANTED: ABI = ABI::V5;

/// Whether this kernel has Landlock: creating (not applying) a ruleset that requires it.
pub(crate) fn probe(mode: SandboxMode) -> Result<(), SandboxError> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(|ruleset| ruleset.create())
        .map(drop)
        .map_err(|error| SandboxError::Unenforceable {
            mode,
            reason: format!("Landlock is not available ({error})"),
        })
}

/// Restricts this process (and what it will `exec`) to `policy`.
pub(crate) fn restrict_self(policy: &SandboxPolicy) -> Result<(), SandboxError> {
    let mode = policy.mode;
    let apply = |detail: String| SandboxError::Apply { mode, detail };
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(ABI_WANTED))
        .map_err(|e| apply(e.to_string()))?;
    if !policy.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI_WANTED))
            .map_err(|e| apply(e.to_string()))?;
    }
    let mut created = ruleset
        .create()
        .map_err(|e| apply(e.to_string()))?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(ABI_WANTED)))
        .map_err(|e| apply(e.to_string()))?
        .add_rules(path_beneath_rules(
            WRITABLE_DEVICES,
            AccessFs::from_all(ABI_WANTED),
        ))
        .map_err(|e| apply(e.to_string()))?;
    if mode == SandboxMode::WorkspaceWrite {
        created = created
            .add_rules(path_beneath_rules(
                &policy.writable_roots,
                AccessFs::from_all(ABI_WANTED),
            ))
            .map_err(|e| apply(e.to_string()))?;
    }
    let status = created.restrict_self().map_err(|e| apply(e.to_string()))?;
    if status.ruleset == RulesetStatus::NotEnforced {
        let reason = match status.landlock {
            LandlockStatus::NotEnabled => "Landlock is built into this kernel but not enabled",
            LandlockStatus::NotImplemented => "this kernel has no Landlock",
            LandlockStatus::Available { .. } => "the kernel enforced none of its rules",
        };
        return Err(SandboxError::Unenforceable {
            mode,
            reason: reason.to_owned(),
        });
    }
    if !policy.network {
        deny_network().map_err(apply)?;
    }
    Ok(())
}

/// A seccomp filter under which `socket` fails with `EPERM` for every address family but
/// `AF_UNIX`: no UDP, raw or TCP sockets (Landlock covers TCP too, on kernels from 6.7).
fn deny_network() -> Result<(), String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let not_unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )
    .map_err(|e| e.to_string())?;
    let rule = SeccompRule::new(vec![not_unix]).map_err(|e| e.to_string())?;
    let rules: BTreeMap<i64, Vec<SeccompRule>> = [(libc::SYS_socket, vec![rule])].into();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    seccompiler::apply_filter(&program).map_err(|e| e.to_string())
}
