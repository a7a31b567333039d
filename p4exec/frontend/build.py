"""Lark tree -> AST, second half: parsers, controls, tables, statements and expressions.

``_Builder`` is the transformer ``parser.parse_preprocessed`` runs; it extends ``build_decls._DeclBuilder``
(the base and the declarations) with the rules for what goes inside parser and control blocks.
"""
from __future__ import annotations

from lark import Token, v_args

from p4exec.errors import P4Error
from p4exec.frontend import ast as A
from p4exec.frontend.build_decls import _DeclBuilder, _nodes
from p4exec.frontend.literals import parse_int_literal, unescape


@v_args(meta=True)
class _Builder(_DeclBuilder):
    # ---- parsers
    def _block_header(self, ch):
        annos = ch[0] or []
        name = ch[2]
        rest = list(ch[3:])
        tps = []
        if rest and isinstance(rest[0], list) and (not rest[0] or isinstance(rest[0][0], str)) \
                and not (rest[0] and isinstance(rest[0][0], A.Param)):
            if rest[0] and all(isinstance(x, str) for x in rest[0]):
                tps = rest.pop(0)
            elif not rest[0] and len(rest) > 1 and isinstance(rest[1], list):
                rest.pop(0)
        params = rest.pop(0)
        ctor = []
        if rest and isinstance(rest[0], tuple) and rest[0][0] == "ctor_params":
            ctor = rest.pop(0)[1]
        return annos, name, tps, params, ctor, rest

    def parser_type_decl(self, meta, ch):
        annos, name, tps, params, _c, _r = self._block_header(ch)
        d = A.ParserTypeDecl(name, tps, params, loc=self._loc(meta))
        d.annos = annos
        return d

    def parser_decl(self, meta, ch):
        annos, name, tps, params, ctor, rest = self._block_header(ch)
        states = [r for r in rest if isinstance(r, A.ParserState)]
        local = [r for r in rest if not isinstance(r, A.ParserState)]
        d = A.ParserDecl(name, tps, params, ctor, local, states, loc=self._loc(meta))
        d.annos = annos
        return d

    def value_set_decl(self, meta, ch):
        d = A.ValueSetDecl(ch[-1], ch[2], ch[-2], loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def parser_state(self, meta, ch):
        annos, name = ch[0] or [], ch[2]
        rest = ch[3:]
        trans = None
        if rest and isinstance(rest[-1], tuple) and rest[-1][0] == "transition":
            trans = rest[-1][1]
            rest = rest[:-1]
        d = A.ParserState(name, [r for r in rest if r is not None], trans, loc=self._loc(meta))
        d.annos = annos
        return d

    def parser_block(self, meta, ch):
        return A.Block(list(ch), loc=self._loc(meta))

    def transition_direct(self, meta, ch):
        return ("transition", ch[1])

    def transition_select(self, meta, ch):
        return ("transition", ch[1])

    def select_expr(self, meta, ch):
        return A.Select(ch[1], list(ch[2:]), loc=self._loc(meta))

    def select_case(self, meta, ch):
        return A.SelectCase(ch[0], ch[1], loc=self._loc(meta))

    def keyset(self, meta, ch):
        return ch[0]

    def tuple_keyset(self, meta, ch):
        return A.KsTuple(list(ch), loc=self._loc(meta))

    def default_keyset(self, meta, ch):
        return A.KsDefault(loc=self._loc(meta))

    def dontcare_keyset(self, meta, ch):
        return A.KsDontCare(loc=self._loc(meta))

    def ks_default(self, meta, ch):
        return A.KsDefault(loc=self._loc(meta))

    def ks_dontcare(self, meta, ch):
        return A.KsDontCare(loc=self._loc(meta))

    def ks_mask(self, meta, ch):
        return A.KsMask(ch[0], ch[2], loc=self._loc(meta))

    def ks_range(self, meta, ch):
        return A.KsRange(ch[0], ch[2], loc=self._loc(meta))

    # ---- controls
    def control_type_decl(self, meta, ch):
        annos, name, tps, params, _c, _r = self._block_header(ch)
        d = A.ControlTypeDecl(name, tps, params, loc=self._loc(meta))
        d.annos = annos
        return d

    def control_decl(self, meta, ch):
        annos, name, tps, params, ctor, rest = self._block_header(ch)
        body = rest[-1]
        local = [r for r in rest[:-1] if not (isinstance(r, Token))]
        d = A.ControlDecl(name, tps, params, ctor, local, body, loc=self._loc(meta))
        d.annos = annos
        return d

    def action_decl(self, meta, ch):
        d = A.ActionDecl(ch[2], ch[3], ch[4], loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def table_decl(self, meta, ch):
        d = A.TableDecl(ch[2], list(ch[3:]), loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def tp_key(self, meta, ch):
        return A.TableProp("key", _nodes(ch, A.KeyElem), loc=self._loc(meta))

    def tp_actions(self, meta, ch):
        return A.TableProp("actions", _nodes(ch, A.ActionRef), loc=self._loc(meta))

    def tp_entries(self, meta, ch):
        const = any(isinstance(c, Token) and c.type == "CONST" for c in ch)
        return A.TableProp("entries", _nodes(ch, A.TableEntryDecl), const, ch[0] or [], loc=self._loc(meta))

    def tp_other(self, meta, ch):
        const = any(isinstance(c, Token) and c.type == "CONST" for c in ch)
        rest = [c for c in ch[1:] if not (isinstance(c, Token) and c.type == "CONST")]
        return A.TableProp(rest[0], rest[1], const, ch[0] or [], loc=self._loc(meta))

    def key_elem(self, meta, ch):
        return A.KeyElem(ch[0], ch[1], ch[2] or [], loc=self._loc(meta))

    def action_ref(self, meta, ch):
        return A.ActionRef(ch[1], ch[2] if len(ch) > 2 else None, ch[0] or [], loc=self._loc(meta))

    def entry(self, meta, ch):
        annos = ch[0] or []
        rest = list(ch[1:])
        prio = None
        if rest and isinstance(rest[0], Token) and rest[0].type == "CONST":
            rest = rest[1:]     # an entry the control plane may not change: p4exec's initial entries are kept anyway
        if rest and isinstance(rest[0], Token) and rest[0].type == "PRIORITY":
            prio = rest[1]
            rest = rest[2:]
        return A.TableEntryDecl(rest[0], rest[1], prio, annos + (rest[2] or []), loc=self._loc(meta))

    # ---- statements
    def block(self, meta, ch):
        return A.Block([c for c in ch if c is not None], loc=self._loc(meta))

    def annotated_block(self, meta, ch):
        return ch[1]      # @atomic and friends: no meaning for a sequential target

    def empty_stmt(self, meta, ch):
        return A.Empty(loc=self._loc(meta))

    def exit_stmt(self, meta, ch):
        return A.Exit(loc=self._loc(meta))

    def return_stmt(self, meta, ch):
        return A.Return(ch[1] if len(ch) > 1 else None, loc=self._loc(meta))

    def assignment(self, meta, ch):
        return A.Assign(ch[0], ch[1], loc=self._loc(meta))

    def compound_assignment(self, meta, ch):
        # `a op= b` is `a = a op b` (P4_16 1.2.4) with the l-value's AST shared by both sides: the checker
        # (statements.py) sees that identity and evaluates the l-value once
        loc = self._loc(meta)
        return A.Assign(ch[0], A.Binary(str(ch[1])[:-1], ch[0], ch[2], loc=loc), loc=loc)

    def shr_assignment(self, meta, ch):
        loc = self._loc(meta)
        return A.Assign(ch[0], A.Binary(">>", ch[0], ch[-1], loc=loc), loc=loc)

    def break_stmt(self, meta, ch):
        return A.Break(loc=self._loc(meta))

    def continue_stmt(self, meta, ch):
        return A.Continue(loc=self._loc(meta))

    def for_c(self, meta, ch):
        return A.For(ch[1], ch[2], ch[3], ch[4], loc=self._loc(meta))

    def for_in(self, meta, ch):
        return A.ForIn(ch[2], ch[3], ch[5], None, ch[6], loc=self._loc(meta))

    def for_in_range(self, meta, ch):
        return A.ForIn(ch[2], ch[3], ch[5], ch[7], ch[8], loc=self._loc(meta))

    def for_inits(self, meta, ch):
        return list(ch)

    def for_updates(self, meta, ch):
        return list(ch)

    def for_var(self, meta, ch):
        d = A.VarDecl(ch[2], ch[1], ch[3], loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def for_assign(self, meta, ch):
        return A.Assign(ch[0], ch[1], loc=self._loc(meta))

    def for_compound(self, meta, ch):
        return self.compound_assignment(meta, ch)

    def for_shr(self, meta, ch):
        return self.shr_assignment(meta, ch)

    def for_call(self, meta, ch):
        return self.method_call_stmt(meta, ch)

    def method_call_stmt(self, meta, ch):
        loc = self._loc(meta)
        return A.CallStmt(A.Call(ch[0], ch[1], [], loc=loc), loc=loc)

    def direct_apply_stmt(self, meta, ch):
        # `C.apply(...)` on a parser/control type: the compiler instantiates it (p4c's InstantiateDirectCalls)
        loc = self._loc(meta)
        return A.CallStmt(A.Call(A.TypeMember(ch[0], "apply", loc=loc), ch[2], [], loc=loc), loc=loc)

    def generic_call_stmt(self, meta, ch):
        loc = self._loc(meta)
        return A.CallStmt(A.Call(ch[0], ch[-1], ch[2], loc=loc), loc=loc)

    def if_stmt(self, meta, ch):
        stmts = [c for c in ch if not isinstance(c, Token)]
        return A.If(stmts[0], stmts[1], stmts[2] if len(stmts) > 2 else None, loc=self._loc(meta))

    def switch_stmt(self, meta, ch):
        return A.Switch(ch[1], list(ch[2:]), loc=self._loc(meta))

    def switch_case(self, meta, ch):
        return A.SwitchCase(ch[0], ch[1] if len(ch) > 1 else None, loc=self._loc(meta))

    def default_label(self, meta, ch):
        return None

    # ---- expressions
    def expr_list(self, meta, ch):
        return list(ch)

    def name_ref(self, meta, ch):
        return A.Name(ch[0], loc=self._loc(meta))

    def global_name_ref(self, meta, ch):
        return A.Name(ch[0], True, loc=self._loc(meta))

    def member(self, meta, ch):
        return A.Member(ch[0], ch[1], loc=self._loc(meta))

    def index(self, meta, ch):
        return A.Index(ch[0], ch[1], loc=self._loc(meta))

    def slice(self, meta, ch):
        return A.Slice(ch[0], ch[1], ch[2], loc=self._loc(meta))

    def call(self, meta, ch):
        return A.Call(ch[0], ch[1], [], loc=self._loc(meta))

    def generic_call(self, meta, ch):
        return A.Call(ch[0], ch[-1], ch[2], loc=self._loc(meta))

    def int_lit(self, meta, ch):
        return parse_int_literal(str(ch[0]), self._loc(meta))

    def true_lit(self, meta, ch):
        return A.BoolLit(True, loc=self._loc(meta))

    def false_lit(self, meta, ch):
        return A.BoolLit(False, loc=self._loc(meta))

    def str_lit(self, meta, ch):
        return A.StrLit(unescape(str(ch[0])[1:-1]), loc=self._loc(meta))

    def list_expr(self, meta, ch):
        return A.ListExpr(ch[0], loc=self._loc(meta))

    def kv_pair(self, meta, ch):
        return (ch[0], ch[1])

    def struct_init(self, meta, ch):
        return A.StructInit(list(ch), loc=self._loc(meta))

    def type_member(self, meta, ch):
        return A.TypeMember(ch[0], ch[1], loc=self._loc(meta))

    def error_member(self, meta, ch):
        return A.ErrorMember(ch[1], loc=self._loc(meta))

    def ctor_call(self, meta, ch):
        return A.CtorCall(ch[0], ch[1], loc=self._loc(meta))

    def this_expr(self, meta, ch):
        raise P4Error("unsupported: 'this'", self._loc(meta))

    def cond(self, meta, ch):
        return A.Cond(ch[0], ch[1], ch[2], loc=self._loc(meta))

    def binop(self, meta, ch):
        return A.Binary(str(ch[1]), ch[0], ch[2], loc=self._loc(meta))

    def shr(self, meta, ch):
        return A.Binary(">>", ch[0], ch[-1], loc=self._loc(meta))

    def unop(self, meta, ch):
        return A.Unary(str(ch[0]), ch[1], loc=self._loc(meta))

    def cast(self, meta, ch):
        return A.Cast(ch[0], ch[1], loc=self._loc(meta))
