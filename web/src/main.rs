//! Entry point of the playground page.

fn main() {
    yew::Renderer::<tilescope_web::components::app::App>::new().render();
}
