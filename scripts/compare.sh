#!/usr/bin/env bash
# Issue 31's like-for-like comparison: every method from one commit on MuSiQue 1-40 and
# HotpotQA 1-20 (PRISM on MuSiQue 1-20), answer lines kept in eval-lines/ so that a run resumes
# on any machine. Usage (from the repository root, after scripts/install.sh):
#
#   bash scripts/compare.sh run             # index the two corpora if needed, run what is left
#   bash scripts/compare.sh collect METHOD  # pool a finished method into results/, regenerate docs
#   bash scripts/compare.sh paired A B      # A against B on the pooled 60: SE and answers, with
#                                           # paired-bootstrap intervals (python -m evals.paired)
#   bash scripts/compare.sh heldout         # the held-out slices (MuSiQue 41-60, HotpotQA 21-40)
#   bash scripts/compare.sh collect-heldout METHOD
#   bash scripts/compare.sh 2wiki           # a third dataset: the 20 hand-written 2Wiki questions
#   bash scripts/compare.sh collect-2wiki METHOD
#   bash scripts/compare.sh next            # the next unseen slices (MuSiQue 61-80, HotpotQA 41-60)
#   bash scripts/compare.sh collect-next METHOD
#   bash scripts/compare.sh collect-unseen METHOD  # MuSiQue 81-100 + HotpotQA 61-100, run by hand
#     (grasp eval ... --offset 80 --limit 20 / --offset 60 --limit 40 --name unseen-METHOD)
#
# The held-out slices were chosen on by nothing: every method there runs from HELDOUT_COMMIT
# (GRASP as it stands after issue 31's changes) and is pooled into results/heldout40/. The
# heldout-grasp-lean-plan row ran the same commands from a worktree of 7fd4c7b (identity steps
# dropped), with --method grasp and --name heldout-grasp-lean-plan.
#
# The runs come from a worktree of COMMIT, so every summary records that one commit; the
# worktree's runs/eval links to eval-lines/ here. One heavy job at a time: wall times are read.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
COMMIT=010a395
WORKTREE=${COMPARE_WORKTREE:-$ROOT/../grasp-compare-$COMMIT}
LINES=eval-lines
HELDOUT_COMMIT=af1d8ec
HELDOUT_WORKTREE=${HELDOUT_WORKTREE:-$ROOT/../grasp-heldout-$HELDOUT_COMMIT}
# The 2Wiki check runs GRASP as it stands after the lean plan (identity steps dropped).
WIKI_COMMIT=${WIKI_COMMIT:-9049b09}
WIKI_WORKTREE=${WIKI_WORKTREE:-$ROOT/../grasp-2wiki-$WIKI_COMMIT}
BEFORE=(--set first_search=rewrite --set focus_chars=0 --set evaluator_prompt=full
    --set reader_focus_chars=0)

worktree() {  # DIR COMMIT: a worktree of COMMIT whose runs/eval links to eval-lines/ here
    if [ ! -d "$1" ]; then
        git worktree add --detach "$1" "$2"
        ln -s "$ROOT/.venv" "$1/.venv"
        mkdir -p "$1/runs" && ln -s "$ROOT/$LINES" "$1/runs/eval"
    fi
}

prepare() {
    worktree "$WORKTREE" "$COMMIT"
    for set in musique_train hotpotqa_train; do
        # Indexed by COMMIT's code too; a re-run of an unchanged file costs nothing.
        (cd "$WORKTREE" && PYTHONPATH="$WORKTREE" .venv/bin/grasp index \
            "../shared/data/${set}_corpus.json" --corpus "$set" --extractor spacy)
    done
}

eval_in() {  # DIR QUESTIONS CORPUS NAME METHOD [grasp eval options]: one uncached eval run
    local dir=$1 questions=$2 corpus=$3 name=$4 method=$5
    shift 5
    echo "== $name on $corpus $*, $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd "$dir" && GRASP_LLM_CACHE=0 PYTHONPATH="$dir" .venv/bin/grasp eval "$questions" \
        --corpus "$corpus" --method "$method" --no-judge --p-samples 5 --name "$name" "$@")
}

one() {  # SET LIMIT NAME METHOD [--set ...]
    local set=$1 limit=$2 name=$3 method=$4
    shift 4
    eval_in "$WORKTREE" "../shared/data/$set.json" "$set" "$name" "$method" --limit "$limit" "$@"
}

slices() {  # DIR PREFIX MUSIQUE_OFFSET HOTPOTQA_OFFSET METHOD: 20 questions of each set
    local set offset
    for pair in "musique_train:$3" "hotpotqa_train:$4"; do
        set=${pair%%:*} offset=${pair##*:}
        eval_in "$1" "../shared/data/$set.json" "$set" "$2-$5" "$5" --offset "$offset" --limit 20
    done
}

report() {  # FILE...: regenerate docs/results.md, and say which commits the summaries record
    .venv/bin/grasp eval-report results --markdown docs/results.md >/dev/null
    grep -ho '"commit": "[^"]*"' "$@" | sort | uniq -c
}

both() {  # NAME METHOD [--set ...]
    one musique_train 40 "$@"
    one hotpotqa_train 20 "$@"
}

run() {
    prepare
    # SA-RAG + CoT and GRASP-before were never measured on these questions: they come before
    # the repeats of Self-Ask and dense, whose rows were reproducible.
    for method in grasp proprag ircot sa-rag-cot; do
        both "$method" "$method"
    done
    both grasp-before grasp "${BEFORE[@]}"
    for method in self-ask dense; do
        both "$method" "$method"
    done
    one musique_train 20 prism prism
}

collect() {  # METHOD
    local name=$1
    if [ "$name" != prism ]; then
        .venv/bin/python -m evals.pooled --out "results/pooled60/$name.summary.json" \
            "$LINES/musique_train/$name.jsonl" "$LINES/hotpotqa_train/$name.jsonl"
        cp "$LINES/hotpotqa_train/$name.summary.json" "results/hotpotqa_train/"
    fi
    cp "$LINES/musique_train/$name.summary.json" "results/musique_train/"
    report results/*/"$name.summary.json"
}

heldout() {
    WORKTREE=$HELDOUT_WORKTREE COMMIT=$HELDOUT_COMMIT prepare
    for method in grasp proprag dense ircot; do
        slices "$HELDOUT_WORKTREE" heldout 40 20 "$method"
    done
}

pool_slices() {  # FOLDER NAME: a run's two slices pooled into results/FOLDER/
    mkdir -p "results/$1"
    .venv/bin/python -m evals.pooled --out "results/$1/$2.summary.json" \
        "$LINES/musique_train/$2.jsonl" "$LINES/hotpotqa_train/$2.jsonl"
    report "results/$1/$2.summary.json"
}

# evals/data/2wiki_handwritten.json: 20 questions written by hand over HippoRAG's 2Wiki passage
# pool (issue 34), on which no setting of any method was chosen.
wiki() {
    worktree "$WIKI_WORKTREE" "$WIKI_COMMIT"
    (cd "$WIKI_WORKTREE" && PYTHONPATH="$WIKI_WORKTREE" .venv/bin/grasp index \
        ../shared/data/2wikimultihopqa_corpus.json --corpus 2wiki --extractor spacy)
    for method in grasp proprag dense ircot self-ask sa-rag-cot; do
        eval_in "$WIKI_WORKTREE" evals/data/2wiki_handwritten.json 2wiki "$method" "$method"
    done
}

collect_wiki() {  # METHOD
    mkdir -p results/2wiki
    cp "$LINES/2wiki/$1.summary.json" results/2wiki/
    report "results/2wiki/$1.summary.json"
}

# A second held-out pair of slices, run after the lean plan from the same worktree as the 2Wiki
# check: does GRASP trail the PropRAG reader on unseen HotpotQA questions, or was 8 against 10
# of 20 noise?
next_slices() {
    WORKTREE=$WIKI_WORKTREE COMMIT=$WIKI_COMMIT prepare
    for method in grasp proprag; do
        slices "$WIKI_WORKTREE" next 60 40 "$method"
    done
}

paired() {  # A B: two methods' pooled-60 lines, paired question by question
    .venv/bin/python -m evals.paired \
        --a "$LINES/musique_train/$1.jsonl" "$LINES/hotpotqa_train/$1.jsonl" \
        --b "$LINES/musique_train/$2.jsonl" "$LINES/hotpotqa_train/$2.jsonl"
}

case "${1:-}" in
    run) run ;;
    collect) collect "${2:?collect needs a method name}" ;;
    heldout) heldout ;;
    collect-heldout) pool_slices heldout40 "heldout-${2:?collect-heldout needs a method name}" ;;
    2wiki) wiki ;;
    collect-2wiki) collect_wiki "${2:?collect-2wiki needs a method name}" ;;
    next) next_slices ;;
    collect-next) pool_slices next40 "next-${2:?collect-next needs a method name}" ;;
    collect-unseen) pool_slices unseen60 "unseen-${2:?collect-unseen needs a method name}" ;;
    paired) paired "${2:?paired needs two method names}" "${3:?paired needs two method names}" ;;
    *) echo "usage: bash scripts/compare.sh run | collect METHOD | heldout | collect-heldout METHOD |" \
            "2wiki | collect-2wiki METHOD | next | collect-next METHOD | collect-unseen METHOD |" \
            "paired A B" >&2
       exit 2 ;;
esac
