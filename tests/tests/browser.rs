//! The playground's panels in headless Chromium against the release build in `dist/`:
//! an example's passes, IR, step graph and timeline lanes; keyboard navigation of
//! passes and the timeline cursor; a syntax error underlined; races without sync; a
//! share link restoring the same view. Ignored by plain `cargo test`; `cargo xtask
//! test` builds `dist/` and runs it with `--include-ignored`.

mod support;

use anyhow::{ensure, Context, Result};
use support::{with_page, Page, ARROW_DOWN, ARROW_RIGHT, ARROW_UP};

/// The pipes the tiled matmul uses on the default preset: its result goes from L0C to GM
/// through FIX (fix-to-gm), so MTE3 has nothing to do.
const MATMUL_PIPES: [&str; 5] = ["S", "MTE2", "MTE1", "M", "FIX"];

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn playground_shows_passes_steps_timeline_races_and_restores_links() -> Result<()> {
    with_page(async |page: &Page| {
        page.open("/").await?;
        page.wait_for_text(".brand-name", "tilescope").await?;
        // The first screen: the default example's teaching text and its timeline.
        let note = page.text_of("[data-testid=example-note]").await?;
        ensure!(note.starts_with("Elementwise"), "the first note: {note}");
        page.wait_for("[data-testid=lane-MTE2]").await?;
        page.screenshot("playground-first-screen").await?;
        // Pick the tiled matmul from the gallery.
        page.click(".tb-examples").await?;
        page.click("[data-example=matmul_tiled]").await?;
        page.tab("Passes").await?;
        page.wait_for("[data-testid=pass-item]").await?;
        page.wait_for("[data-testid=ir-view]").await?;
        page.screenshot("playground-passes").await?;
        // The worker times its passes with the browser's clock.
        let micros = page.attr("[data-testid=compile-status]", "data-micros").await?;
        ensure!(
            micros.parse::<u64>().unwrap_or(0) > 0,
            "the passes took {micros:?} µs"
        );

        // Arrow keys walk the pass list.
        let last = page.attr("[data-testid=ir-view]", "data-pass").await?;
        let list = page.wait_for(".pass-list").await?;
        list.send_keys(ARROW_UP).await?;
        page.eventually("the previous pass is shown", async || {
            Ok(page.attr("[data-testid=ir-view]", "data-pass").await? != last)
        })
        .await?;
        list.send_keys(ARROW_DOWN).await?;
        page.eventually("back on the last pass", async || {
            Ok(page.attr("[data-testid=ir-view]", "data-pass").await? == last)
        })
        .await?;

        // The step graph; clicking a step switches the IR to form-steps.
        page.tab("Steps").await?;
        page.click("[data-testid=step-node]").await?;
        page.screenshot("playground-steps").await?;
        // A sync edge between two steps opens the card of its pair.
        page.click("[data-testid=sync-edge]").await?;
        let card = page.text_of("[data-testid=sync-card]").await?;
        ensure!(card.contains('→'), "the sync edge's card: {card}");

        // The timeline has a lane for every pipe the kernel uses.
        page.tab("Timeline").await?;
        for pipe in MATMUL_PIPES {
            page.wait_for(&format!("[data-testid=lane-{pipe}]")).await?;
        }
        let unused = page
            .eval("return document.querySelectorAll('[data-testid=lane-MTE3]').length;")
            .await?;
        ensure!(unused == 0, "a lane for the unused MTE3 pipe ({unused})");
        let readout = page.wait_for("[data-testid=cursor-readout-cycle]").await?;
        let before = readout.text().await?;
        page.wait_for(".timeline")
            .await?
            .send_keys(ARROW_RIGHT)
            .await?;
        page.eventually("the cursor moves", async || {
            Ok(page.text_of("[data-testid=cursor-readout-cycle]").await?
                != before)
        })
        .await?;
        page.wait_for("[data-testid=cursor-readout]").await?;
        page.screenshot("playground-timeline").await?;
        // A flag arrow's head opens the card of its pair; zoom in until the arrows in
        // the window are few enough to click.
        let timeline = page.wait_for(".timeline").await?;
        for _ in 0..10 {
            let heads = page
                .eval("return document.querySelectorAll('[data-testid=flag-arrow]').length;")
                .await?;
            if heads.as_u64().unwrap_or(0) > 0 {
                break;
            }
            timeline.send_keys("+").await?;
        }
        // Heads of flags that meet at one cycle overlap: click one that is on top.
        let k = page
            .eval(
                "const hs = Array.from(document.querySelectorAll('[data-testid=flag-arrow]'));\
                 return hs.findIndex(h => { const r = h.getBoundingClientRect();\
                 return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === h; });",
            )
            .await?;
        let k = k.as_i64().filter(|k| *k >= 0).context("no flag head on top")?;
        let head = format!("[data-testid=flag-arrow]:nth-of-type({})", k + 1);
        let set = page.attr(&head, "data-instr").await?;
        page.click(&head).await?;
        let card_shows = async |what: &str| {
            page.eventually(&format!("the sync card shows {what:?}"), async || {
                Ok(page.text_of("[data-testid=sync-card]").await?.contains(what))
            })
            .await
        };
        card_shows(&format!("set_flag #{set}")).await?;
        page.screenshot("playground-flag-card").await?;
        let shown = page.text_of(".sync-card-title").await?;
        timeline.send_keys("0").await?;

        // So does a set_flag line of insert-sync's IR in the Passes panel (one of
        // another pair of pipes than the card on screen).
        page.tab("Passes").await?;
        page.click("[data-testid=pass-item][data-pass=insert-sync]").await?;
        let shown_pipes = shown.split(" · ").next().unwrap_or_default().replace(" → ", ", ");
        let line = page
            .eval(&format!(
                "const l = Array.from(document.querySelectorAll('[data-testid=ir-view] .ir-sync'))\
                 .find(e => !e.textContent.includes('{shown_pipes}'));\
                 if (!l) return null;\
                 const m = l.textContent.match(/_flag (\\w+), (\\w+)/);\
                 return [l.dataset.instr, m[1] + ' → ' + m[2]];"
            ))
            .await?;
        let (instr, pipes) = line[0].as_str().zip(line[1].as_str()).context("an IR sync line of another pair")?;
        page.click(&format!("[data-testid=ir-view] [data-instr='{instr}']")).await?;
        card_shows(pipes).await?;
        page.screenshot("playground-ir-sync-card").await?;
        page.tab("Timeline").await?;

        // A set_flag line of the assembly explains its pair; the card stays with the
        // selection on the timeline.
        page.tab("Assembly").await?;
        let set = page
            .eval(
                "const l = Array.from(document.querySelectorAll('.asm-line[data-instr]'))\
                 .find(e => e.textContent.includes('set_flag')); return l ? l.dataset.instr : null;",
            )
            .await?;
        let set = set.as_str().context("a set_flag line")?.to_string();
        page.click(&format!("[data-instr='{set}']")).await?;
        let card = page.text_of("[data-testid=sync-card]").await?;
        ensure!(
            card.contains('→') && ["RAW", "WAR", "WAW"].iter().any(|k| card.contains(k)),
            "the sync card: {card}"
        );
        ensure!(
            card.contains("set_flag #") && card.contains("wait_flag #") && card.contains("producer"),
            "the card links both instructions and the source: {card}"
        );
        page.screenshot("playground-sync-card").await?;
        page.tab("Timeline").await?;
        page.wait_for("[data-testid=sync-card]").await?;

        // A share link opens the same kernel and view in a fresh page.
        let link = page.attr("[data-testid=share]", "data-link").await?;
        ensure!(link.starts_with("v1="), "share link {link:?}");
        page.open(&format!("/#{link}")).await?;
        page.wait_for("[data-testid=lane-MTE1]").await?;
        page.eventually("the restored view shows the same kernel", async || {
            Ok(page.text_of(".tb-examples").await?
                .contains("matmul"))
        })
        .await?;

        // Without sync, the elementwise kernel races.
        page.click(".tb-examples").await?;
        page.click("[data-example=elementwise]").await?;
        // First with auto sync, the Output panel: cycles against a bound no run beats,
        // its loads and stores hatched where they shared GM bandwidth, and the output
        // matching the reference.
        page.tab("Output").await?;
        page.eventually(
            "the elementwise run's shared bandwidth is hatched",
            async || {
                let n = page
                    .eval("return document.querySelectorAll('.util-shared').length;")
                    .await?;
                Ok(n.as_u64().unwrap_or(0) >= 2)
            },
        )
        .await?;
        let number = async |id: &str| -> Result<u64> {
            let text = page.text_of(&format!("[data-testid={id}]")).await?;
            Ok(text.trim().parse()?)
        };
        let (cycles, bound) = (number("stat-cycles").await?, number("stat-bound").await?);
        ensure!(
            0 < bound && bound <= cycles,
            "bound {bound}, cycles {cycles}"
        );
        page.wait_for_text(".stat-verdict", "✓ matches reference")
            .await?;
        // The roofline and where each pipe's cycles went are core's figures for the
        // same run (the playground's options: teach, auto sync), and every bar adds up
        // to the run's cycles.
        let source = tilescope::examples::Example::find("elementwise")
            .context("the elementwise example")?
            .source;
        let core = tilescope::run::run(
            source,
            &tilescope::compile::CompileOptions {
                preset: Some("teach".into()),
                ..Default::default()
            },
            Vec::new(),
            0,
        );
        ensure!(core.sim.cycles == cycles, "core {} page {cycles}", core.sim.cycles);
        ensure!(number("stat-roofline").await? == core.roofline.cycles);
        let path = core.path_bound.context("core kept the whole trace")?;
        ensure!(number("stat-path-bound").await? == path, "core path bound {path}");
        let totals = page
            .eval(
                "return Array.from(document.querySelectorAll('[data-testid=stall-row]'))\
                 .map(r => [r.dataset.pipe, Number(r.dataset.total), r.textContent]);",
            )
            .await?;
        let rows = totals.as_array().context("stall rows")?;
        ensure!(rows.len() >= 3, "stall rows {totals}");
        for row in rows {
            ensure!(row[1].as_u64() == Some(cycles), "a bar that is not the run: {row}");
        }
        let mte2 = core.sim.stalls.iter().find(|s| s.pipe.name() == "MTE2").context("MTE2")?;
        let mte2_row = rows
            .iter()
            .find(|r| r[0].as_str() == Some("MTE2"))
            .and_then(|r| r[2].as_str())
            .context("an MTE2 row")?;
        ensure!(
            mte2_row.contains(&format!("{} busy", mte2.busy))
                && mte2_row.contains(&format!("{} nothing issued", mte2.not_issued)),
            "MTE2's row {mte2_row:?} against core's {mte2:?}"
        );
        page.screenshot("playground-output").await?;
        // Its longest idle stretch opens on the timeline.
        let longest = mte2.longest_idle.context("MTE2 idles")?;
        page.click("[data-testid=stall-row][data-pipe=MTE2] button").await?;
        page.wait_for_text_containing(
            "[data-testid=cursor-readout-cycle]",
            &format!("cycle {} /", longest.from),
        )
        .await?;
        // The longest flag wait opens at its longest wait, with the card saying why
        // its pair is there.
        page.tab("Output").await?;
        let mut waits: Vec<_> = core.sim.stalls.iter().flat_map(|s| &s.flags).collect();
        waits.sort_by_key(|f| (std::cmp::Reverse(f.cycles), f.wait_instr));
        let wait = waits.first().context("core's longest flag wait")?;
        page.click("[data-testid=flag-wait]").await?;
        page.wait_for_text_containing(
            "[data-testid=cursor-readout-cycle]",
            &format!("cycle {} /", wait.longest.from),
        )
        .await?;
        let card = page.text_of("[data-testid=sync-card]").await?;
        ensure!(
            card.contains(&format!("{} → {}", wait.src.name(), wait.dst.name())),
            "the card of wait #{} ({} → {}): {card}",
            wait.wait_instr,
            wait.src.name(),
            wait.dst.name()
        );
        page.tab("Output").await?;

        // What a pass buys: the worker measures the run without each optional pass once
        // the result settles; turning multi-buffer off costs those cycles.
        page.tab("Passes").await?;
        let effect_at = "[data-testid=pass-switch][data-pass=multi-buffer] [data-testid=pass-effect]";
        let effect = page.text_of(effect_at).await?;
        let saved: i64 = effect
            .strip_prefix("saves ")
            .and_then(|e| e.strip_suffix(" cycles"))
            .with_context(|| format!("multi-buffer's effect {effect:?}"))?
            .parse()
            .with_context(|| format!("multi-buffer's effect {effect:?}"))?;
        ensure!(saved > 0, "multi-buffer buys nothing here: {effect}");
        // Coloured as a gain because it is one (a cost is red, and says "costs").
        let class = page
            .eval(&format!("return document.querySelector('{effect_at}').className;"))
            .await?;
        ensure!(
            class.as_str().is_some_and(|c| c.contains("pass-effect-gain")),
            "a saving is coloured as a gain: {class}"
        );
        let bought = -saved;
        page.click("[data-testid=pass-switch][data-pass=multi-buffer] input").await?;
        page.tab("Output").await?;
        page.eventually("the run without multi-buffer", async || {
            Ok(number("stat-cycles").await? as i64 == cycles as i64 - bought)
        })
        .await?;
        page.screenshot("playground-pass-off").await?;
        page.tab("Passes").await?;
        page.click("[data-testid=pass-switch][data-pass=multi-buffer] input").await?;

        // Compare: the same kernel under sync barrier, both runs on one axis.
        page.tab("Compare").await?;
        page.click("[data-testid=compare-start]").await?;
        let summary = page.text_of("[data-testid=compare-summary]").await?;
        let cycles_row = summary
            .lines()
            .find(|l| l.starts_with("cycles"))
            .with_context(|| format!("no cycles row in {summary}"))?;
        ensure!(
            cycles_row.contains(&cycles.to_string()) && cycles_row.contains('+'),
            "barrier should take longer than auto: {cycles_row}"
        );
        page.wait_for(".cmp-run .cmp-bar").await?;
        page.screenshot("playground-compare").await?;
        // B has pass switches of its own: without multi-buffer, B's run changes.
        page.click(".compare-passes summary").await?;
        page.click("[data-testid=compare-pass][data-pass=multi-buffer] input").await?;
        page.eventually("B runs without multi-buffer", async || {
            let now = page.text_of("[data-testid=compare-summary]").await?;
            Ok(now != summary && now.contains("cycles"))
        })
        .await?;
        ensure!(
            page.text_of(".compare-passes summary").await?.contains("1 off"),
            "B's switch is off"
        );
        page.wait_for("[data-testid=sync-select]")
            .await?
            .select_by_value("none")
            .await?;
        page.tab("Timeline").await?;
        page.eventually("races are listed", async || {
            let n = page.attr("[data-testid=race-list]", "data-count").await?;
            Ok(n.parse::<u32>().unwrap_or(0) > 0)
        })
        .await?;
        // Each race names the pair `auto` places for it.
        let fix = page.text_of("[data-testid=race-fix]").await?;
        ensure!(fix.starts_with("auto orders it"), "the race's fix: {fix}");
        page.screenshot("playground-races").await?;

        // A syntax error is underlined in the editor.
        page.wait_for(".editor-input")
            .await?
            .send_keys("\n)))")
            .await?;
        page.wait_for("[data-testid=diag-underline]").await?;
        page.screenshot("playground-error").await?;

        page.assert_no_console_errors().await
    })
    .await
}

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn the_editor_colours_floor_division_as_the_compiler_reads_it() -> Result<()> {
    with_page(async |page: &Page| {
        page.open("/").await?;
        page.click(".tb-examples").await?;
        page.click("[data-example=block_permute]").await?;
        // `(b // 4)` divides: four `//` operators in the source, none of them a comment.
        page.eventually("the block permute source is coloured", async || {
            let divisions = page
                .eval(
                    "return Array.from(document.querySelectorAll('.tk-p'))\
                     .filter(e => e.textContent === '//').length;",
                )
                .await?;
            Ok(divisions.as_u64().unwrap_or(0) == 4)
        })
        .await?;
        let wrong = page
            .eval(
                "return Array.from(document.querySelectorAll('.tk-com'))\
                 .filter(e => e.textContent.startsWith('// 4')).length;",
            )
            .await?;
        ensure!(wrong == 0, "{wrong} floor divisions coloured as comments");
        page.screenshot("editor-floor-division").await?;
        page.assert_no_console_errors().await?;
        Ok(())
    })
    .await
}

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn the_weight_kept_in_l1_shows_its_slices_after_subtile_matmul() -> Result<()> {
    with_page(async |page: &Page| {
        page.open("/").await?;
        page.wait_for("[data-testid=lane-MTE2]").await?;
        page.click(".tb-examples").await?;
        page.click("[data-example=weights_l1]").await?;
        page.tab("Passes").await?;
        page.click("[data-testid=pass-item][data-pass=subtile-matmul]")
            .await?;
        page.eventually("subtile-matmul's IR", async || {
            Ok(page.attr("[data-testid=ir-view]", "data-pass").await? == "subtile-matmul")
        })
        .await?;
        let ir = page.text_of("[data-testid=ir-view]").await?;
        for line in [
            "pieces moved from L1, L0A capacity required it",
            "= slice %wt[:, %kc .. %kc + ",
        ] {
            ensure!(ir.contains(line), "no `{line}` in the IR:\n{ir}");
        }
        page.screenshot("playground-l1-pieces").await?;
        Ok(())
    })
    .await
}

/// A pass that leaves a loop as written says so in the Passes panel, at the loop, with
/// core's words: attention whose row loop runs a number of times that depends on an
/// outer loop, typed into the editor, under software-pipeline.
#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn a_pass_that_leaves_a_loop_as_written_says_why() -> Result<()> {
    let source = include_str!("../../core/tests/kernels/varying_attention.tile");
    let core = tilescope::compile::compile(source, &Default::default());
    let note = core
        .passes
        .iter()
        .find(|p| p.name == "software-pipeline")
        .and_then(|p| p.notes.first())
        .map(|n| format!("Note at {}: {}", n.at, n.message))
        .context("core notes the loop")?;
    with_page(async |page: &Page| {
        page.open("/").await?;
        page.wait_for("[data-testid=lane-MTE2]").await?;
        page.set_editor_text(source).await?;
        page.tab("Passes").await?;
        page.click("[data-testid=pass-item][data-pass=software-pipeline]")
            .await?;
        // The list keeps the selected pass when the typed kernel's compile arrives.
        page.wait_for_text("[data-testid=pass-notes]", &note)
            .await?;
        let ir = page.text_of("[data-testid=ir-view]").await?;
        ensure!(
            ir.contains("0..(32 * %c + 32)"),
            "the typed kernel's IR:\n{ir}"
        );
        page.screenshot("passes-note").await?;
        page.assert_no_console_errors().await?;
        Ok(())
    })
    .await
}

/// Block-sparse attention on the page: the step inside the `if` says when it runs, a
/// sync edge's card says which end runs only inside the branch, and the timeline lists
/// the `if` with the counts core's simulator gives on the page's inputs (seed 0), its
/// "first skipped" button putting the cursor on that decision.
#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn a_branching_kernel_shows_its_conditions_sync_notes_and_decisions() -> Result<()> {
    let example = tilescope::examples::Example::find("block_sparse_attention")
        .context("the gallery has block-sparse attention")?;
    let options = tilescope::compile::CompileOptions {
        preset: Some("teach".to_string()),
        ..Default::default()
    };
    let core = tilescope::run::run(example.source, &options, Vec::new(), 0);
    let branch = core
        .sim
        .branches
        .first()
        .context("core counts one branch")?
        .clone();
    let first_skip = core
        .sim
        .branch_runs
        .iter()
        .find(|r| !r.taken)
        .context("a block is skipped")?
        .cycle;
    let conds: Vec<String> = core
        .compile
        .steps
        .iter()
        .flat_map(|g| &g.nodes)
        .filter_map(|n| n.branch.clone())
        .collect();
    ensure!(!conds.is_empty(), "no step inside the branch");

    with_page(async |page: &Page| {
        page.open("/").await?;
        page.wait_for("[data-testid=lane-MTE2]").await?;
        page.click(".tb-examples").await?;
        page.click("[data-example=block_sparse_attention]").await?;

        // A step inside the `if`: its detail says when it runs.
        page.tab("Steps").await?;
        page.wait_for("[data-testid=step-node]").await?;
        let step = page
            .eval(
                "const n = Array.from(document.querySelectorAll('[data-testid=step-node]'))\
                 .find(g => g.querySelector('title').textContent.includes('runs only if'));\
                 return n ? n.getAttribute('data-step') : null;",
            )
            .await?;
        let step = step
            .as_str()
            .context("a step node marked `runs only if`")?
            .to_string();
        page.click(&format!("[data-testid=step-node][data-step=\"{step}\"]"))
            .await?;
        let detail = page.text_of("[data-testid=step-branch]").await?;
        ensure!(
            conds.iter().any(|c| detail == format!("runs only if {c}")),
            "the step's detail {detail:?}, core's conditions {conds:?}"
        );
        page.screenshot("steps-branch").await?;

        // Some sync edge has an end inside the branch, and its card says so.
        let edges = page.count("[data-testid=sync-edge]").await?;
        let mut note = None;
        for k in 0..edges {
            page.execute(
                "document.querySelectorAll('[data-testid=sync-edge]')[arguments[0]]\
                 .dispatchEvent(new MouseEvent('click', {bubbles: true}));",
                vec![k.into()],
            )
            .await?;
            page.wait_for("[data-testid=sync-card]").await?;
            if page.count("[data-testid=sync-card-branch]").await? > 0 {
                note = Some(page.text_of("[data-testid=sync-card-branch]").await?);
                break;
            }
        }
        let note = note.context("no sync card names a branch")?;
        ensure!(
            note.contains("runs only if") && note.contains("The pair: its "),
            "the card's note: {note}"
        );
        page.screenshot("sync-card-branch").await?;

        // The timeline's branch list has core's counts.
        page.tab("Timeline").await?;
        page.wait_for("[data-testid=branch-row]").await?;
        let rows = page.count("[data-testid=branch-row]").await?;
        ensure!(rows == 1, "{rows} branch rows");
        let runs = page.attr("[data-testid=branch-row]", "data-runs").await?;
        let taken = page.attr("[data-testid=branch-row]", "data-taken").await?;
        ensure!(
            (runs.as_str(), taken.as_str())
                == (
                    branch.runs.to_string().as_str(),
                    branch.taken.to_string().as_str()
                ),
            "the page says {taken} of {runs}, core {} of {}",
            branch.taken,
            branch.runs
        );
        let row = page.text_of("[data-testid=branch-row]").await?;
        let want = format!("taken {} of {} times", branch.taken, branch.runs);
        ensure!(row.contains(&want), "{row:?} lacks {want:?}");
        page.eval(
            "Array.from(document.querySelectorAll('[data-testid=branch-row] button'))\
             .find(b => b.textContent === 'first skipped').click(); return true;",
        )
        .await?;
        page.wait_for_text_containing(
            "[data-testid=cursor-readout-cycle]",
            &format!("cycle {first_skip} /"),
        )
        .await?;
        page.screenshot("timeline-branches").await?;
        page.assert_no_console_errors().await?;
        Ok(())
    })
    .await
}
