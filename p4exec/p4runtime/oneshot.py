"""One-shot action selector programming (spec: a table entry carrying an action set).

The set becomes hidden members and a group in the runtime selector, with ids the
controller cannot clash with: the spec forbids mixing one-shot and member/group
programming on the same selector, so while one-shots are in use the selector
holds no controller-made members. Reads return the action set as written.
"""

from __future__ import annotations

from p4.v1 import p4runtime_pb2

from p4exec.p4runtime.context import Context
from p4exec.p4runtime.errors import invalid
from p4exec.p4runtime.store import Realized

U = p4runtime_pb2.Update


def uses_oneshot(ctx, ap_id: int) -> bool:
    return any(r.ap_id == ap_id for r in ctx.store.oneshots.values())


def check_style(ctx, ap_id: int, oneshot: bool) -> None:
    """INVALID_ARGUMENT when one-shot and member/group programming would mix on a selector."""
    oneshots = uses_oneshot(ctx, ap_id)
    if oneshot and not oneshots:
        rt = ctx.binding.profile(ctx.index.action_profile(ap_id).preamble.name)
        if rt.members or rt.groups:
            raise invalid("this action selector is programmed with members/groups: no one-shot sets")
    if not oneshot and oneshots:
        raise invalid("this action selector is programmed with one-shot sets: no members/groups")


def _free_ids(taken, n: int) -> list[int]:
    out: list[int] = []
    i = 1
    while len(out) < n:
        if i not in taken:
            out.append(i)
        i += 1
    return out


def realize(ctx, table, entry: p4runtime_pb2.TableEntry) -> tuple[p4runtime_pb2.TableEntry, Realized]:
    """Create the hidden members and group; return the entry pointing at the group."""
    ap_id = table.implementation_id
    profile = ctx.index.action_profile(ap_id)
    name = profile.preamble.name
    rt = ctx.binding._obj("action_profiles", name)
    used_members = set(rt.members) if rt is not None else set()
    used_groups = set(rt.groups) if rt is not None else set()
    for r in ctx.store.oneshots.values():
        used_members.update(r.member_ids)
        used_groups.add(r.group_id)
    actions = entry.action.action_profile_action_set.action_profile_actions
    for a in actions:
        check_watch_port(ctx, a)
    member_ids = _free_ids(used_members, len(actions))
    group_id = _free_ids(used_groups, 1)[0]
    written = p4runtime_pb2.ActionProfileActionSet()
    written.CopyFrom(entry.action.action_profile_action_set)
    done = Realized(ap_id, group_id, action_set=written)
    try:
        group = p4runtime_pb2.ActionProfileGroup(action_profile_id=ap_id, group_id=group_id,
                                                 max_size=profile.max_group_size)
        for mid, a in zip(member_ids, actions, strict=True):
            member = p4runtime_pb2.ActionProfileMember(action_profile_id=ap_id, member_id=mid)
            member.action.CopyFrom(a.action)
            ctx.binding.member_write(name, U.INSERT, member)
            done.member_ids.append(mid)
            gm = group.members.add(member_id=mid, weight=a.weight)
            if a.WhichOneof("watch_kind") == "watch_port":
                gm.watch_port = a.watch_port
            elif a.WhichOneof("watch_kind") == "watch":
                gm.watch = a.watch
        ctx.binding.group_write(name, U.INSERT, group)
    except Exception:
        release(ctx, done, group_made=False)
        raise
    pointing = p4runtime_pb2.TableEntry()
    pointing.CopyFrom(entry)
    pointing.action.action_profile_group_id = group_id
    return pointing, done


def release(ctx, done: Realized, group_made: bool = True) -> None:
    """Remove a one-shot's hidden group and members (after its entry is gone or replaced)."""
    name = ctx.index.action_profile(done.ap_id).preamble.name
    if group_made:
        ctx.binding.group_write(name, U.DELETE, p4runtime_pb2.ActionProfileGroup(
            action_profile_id=done.ap_id, group_id=done.group_id))
    for mid in done.member_ids:
        ctx.binding.member_write(name, U.DELETE, p4runtime_pb2.ActionProfileMember(
            action_profile_id=done.ap_id, member_id=mid))


def check_watch_port(ctx: Context, member) -> None:
    """A watch port must be empty or a port of the device (spec)."""
    kind = member.WhichOneof("watch_kind")
    port = int.from_bytes(member.watch_port, "big") if kind == "watch_port" and member.watch_port \
        else (member.watch if kind == "watch" and member.watch else None)
    if port is None:
        return
    ports = ctx.device.port_status()
    if ports and port not in ports:
        raise invalid(f"watch port {port} is not a port of this device")
